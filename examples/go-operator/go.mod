module libtfjob.local/examples/go-operator

go 1.21

require github.com/libtfjob/libtfjob/bindings/go v0.0.0

replace github.com/libtfjob/libtfjob/bindings/go => ../../bindings/go
