#!/usr/bin/env bash
# Where the k-d tree's build goes on the H100 host (a temporary build timing its phases, not committed): 2^16
# references, 20 builds after 3, on 1, 2, 4, 8 and 16 goroutines.
set -u
gunzip -f .carry/dev68/engine.kd.gz && chmod +x .carry/dev68/engine.kd
cd internal/engine
../../.carry/dev68/engine.kd -test.run ZZKdPhases -test.v -test.cpu 1,2,4,8,16 2>&1 | grep -E "GOMAXPROCS"
