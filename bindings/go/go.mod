module github.com/libtfjob/libtfjob/bindings/go

go 1.21
