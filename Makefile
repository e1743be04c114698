# geoknn developer targets. The README's two commands need none of these.

.PHONY: test ptx bin vet

test:
	go test ./...

vet:
	go vet ./...

# Rebuild kernels/*.ptx from kernels/*.cu (needs nvcc, i.e. the GPU machine).
ptx:
	kernels/build.sh

# Static binaries for the GPU machine (no Go there): CLI and device tests.
# -buildvcs=auto: the binary records its commit for `knn bench` (GOFLAGS may turn it off).
bin:
	CGO_ENABLED=0 go build -buildvcs=auto -o bin/knn ./cmd/knn
	CGO_ENABLED=0 go test -c -o bin/engine.test ./engine
	CGO_ENABLED=0 go test -c -o bin/cuda.test ./cuda
	CGO_ENABLED=0 go test -c -o bin/geoknn.test .
