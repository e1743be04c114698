# geoknn developer targets (docs/design.md, "Working on the engine"). Building and testing need none of these.

.PHONY: test ptx bin bin-carry vet gpu-check gpu-scaling-bench gpu-stream-bench wheel wheel-deps

test:
	go test ./...

vet:
	go vet ./...

# Rebuild internal/kernels/*.ptx from internal/kernels/*.cu (needs nvcc, i.e. the GPU machine).
ptx:
	internal/kernels/build.sh

# Static binaries for the GPU machine (no Go there): CLI and the test
# binaries of every package with GPU tests (cuda, internal/gpu, the root),
# and knn serve's load generator (.ci/gpu-serve-bench).
# -buildvcs=auto: the binary records its commit for `knn bench` (GOFLAGS may turn it off).
# Stripped (-s -w): they travel to the GPU machine.
bin:
	CGO_ENABLED=0 go build -buildvcs=auto -ldflags="-s -w" -o bin/knn ./cmd/knn
	CGO_ENABLED=0 go build -ldflags="-s -w" -o bin/knn-loadgen ./cmd/knn-loadgen
	CGO_ENABLED=0 go test -c -ldflags="-s -w" -o bin/gpu.test ./internal/gpu
	CGO_ENABLED=0 go test -c -ldflags="-s -w" -o bin/cuda.test ./cuda
	CGO_ENABLED=0 go test -c -ldflags="-s -w" -o bin/geoknn.test .

# The binaries compressed for the trip (22 MB instead of 63: the Parquet
# library makes knn 47 MB, and a trip carries at most 64 MiB): carry
# [".carry"], then on the GPU machine `tar xzf .carry/bin.tgz` first.
bin-carry: bin
	mkdir -p .carry
	tar czf .carry/bin.tgz bin

# The GPU machine's check (.ci/gpu-check), after `make bin` here.
gpu-check: bin
	.ci/gpu-check $${OUT:-gpu-check-out}

# The multi-GPU figures of BENCHMARKS.md on the GPU machine, after `make
# bin` here (BASE=dir of another build's knn and geoknn.test beside).
gpu-scaling-bench: bin
	.ci/gpu-scaling-bench

# The streamed file figures of BENCHMARKS.md on the GPU machine, after
# `make bin` here (N=27, CITIES=the full cities for the published ones).
gpu-stream-bench: bin
	.ci/gpu-stream-bench $${OUT:-gpu-stream-bench-out}

# The Python wheel, python/dist/geoknn-*.whl, carrying a static knn (no
# cgo: it runs on any Linux x86_64). Built offline with Debian's
# python3-build and python3-hatchling (the package index is unreachable).
# wheel-deps says what to install before anything compiles: a missing
# module used to surface only after minutes of building knn.
PYTHON ?= /usr/bin/python3
wheel-deps:
	@$(PYTHON) -c 'import build, hatchling' 2>/dev/null || { \
		echo "make wheel needs the Python modules build and hatchling for $(PYTHON):" >&2; \
		echo "  sudo apt-get install python3-build python3-hatchling    (Debian, Ubuntu)" >&2; \
		echo "or name another interpreter that has them: make wheel PYTHON=..." >&2; \
		exit 1; }

# Without VCS stamping where git refuses the checkout (CI: owned by another user).
# The wheel is made readable by all (0644): it is shared, not a secret.
wheel: wheel-deps
	CGO_ENABLED=0 go build -trimpath -buildvcs=auto -ldflags="-s -w" -o python/geoknn/_bin/knn ./cmd/knn || \
		CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" -o python/geoknn/_bin/knn ./cmd/knn
	rm -f python/dist/geoknn-*.whl
	cd python && $(PYTHON) -m build --wheel --no-isolation --skip-dependency-check --outdir dist .
	chmod 0644 python/dist/geoknn-*.whl
