// etcd, built from the published go.etcd.io/etcd/server/v3 module: the same entry point as
// the upstream etcd binary (server/main.go), without its etcdutl/etcdctl extras.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
