package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geoknn/geoknn/client"
)

// TestServeDrains: knn serve answers on loopback, and a stop (the
// context a signal cancels) drains it to a clean exit, its CPU profile
// written.
func TestServeDrains(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "addr")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--ref", "4096", "--engine", "cpu", "--addr", "127.0.0.1:0", "--ready-file", ready,
			"--cpu-profile", filepath.Join(dir, "cpu.pprof")}, &bytes.Buffer{}, &stderr)
	}()
	var addr []byte
	for range 600 {
		if b, err := os.ReadFile(ready); err == nil && len(b) > 0 {
			addr = b
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v\n%s", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if addr == nil {
		t.Fatal("serve never got ready")
	}
	c := client.New("http://" + strings.TrimSpace(string(addr)))
	a, err := c.KNearest(context.Background(), []float64{10, 20}, []float64{30, 40}, 3, 0)
	if err != nil || len(a.Index) != 2 || len(a.Index[0]) != 3 || a.Version != 1 {
		t.Fatalf("%+v %v", a, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("drain: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no drain in 60 s")
	}
	if !strings.Contains(stderr.String(), "drained") {
		t.Fatalf("log: %s", stderr.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.pprof")); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("--cpu-profile: %v, % x", err, b[:min(len(b), 8)])
	}
}

func TestServeRefusesOpenAddrWithoutToken(t *testing.T) {
	t.Setenv("GEOKNN_TOKEN", "")
	err := run(context.Background(), []string{"serve", "--ref", "64", "--addr", "0.0.0.0:0"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "bearer token") {
		t.Fatalf("got %v", err)
	}
	if !isLoopback("127.0.0.1:1") || !isLoopback("[::1]:1") || !isLoopback("localhost:1") || isLoopback(":8427") || isLoopback("10.0.0.1:1") {
		t.Fatal("isLoopback")
	}
}
