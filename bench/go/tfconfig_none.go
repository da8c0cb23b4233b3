//go:build !tfconfig

package main

// Without -tags tfconfig the installed libtfjob is assumed to lack tfjob_tf_config.
const haveTFConfig = false

func bindingTFConfig(data []byte, rtype string, index int) func() error { return nil }
