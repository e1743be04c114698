package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/serve"
	"github.com/geoknn/geoknn/pointio"
)

const serveUsage = `Usage: knn serve --ref FILE|COUNT [flags]

Loads the references once, keeps them prepared on every GPU (or the CPU)
and answers nearest, k-nearest and within-radius queries over HTTP until
SIGTERM or SIGINT, then drains: requests in flight are answered, new ones
refused, exit 0. See docs/serve.md for the endpoints.

  knn serve --ref vehicles.parquet --ref-id vehicle_id
  curl -s localhost:8427/v1/nearest -d '{"lat":52.52,"lon":13.40}'

Listening beyond loopback needs a bearer token, read from --token-file or
the GEOKNN_TOKEN environment variable (never a flag: flags show in ps).

Flags:
`

type serveFlags struct {
	ref, refID, latCol, lonCol, gen string
	seed                            uint64
	addr, engine, tokenFile         string
	gpus                            int
	tlsCert, tlsKey, readyFile      string
	maxBody                         int64
	maxPoints, maxK                 int
	queryTimeout, drain, batchWait  time.Duration
	batchPoints, workers, bulkSlots int
	logJSON, debug                  bool
	cpuProfile                      string
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.ref, "ref", "", "the references: a file (CSV, GeoJSON, Parquet, Arrow, NumPy) or a count of synthetic points (2^16)")
	fs.StringVar(&f.refID, "ref-id", "", "the references' id column: answers carry it, updates name references by it (default: by index)")
	fs.StringVar(&f.latCol, "lat-col", "", "the latitude column's name, where the file has it")
	fs.StringVar(&f.lonCol, "lon-col", "", "the longitude column's name, where the file has it")
	fs.StringVar(&f.gen, "gen", "sphere", "generator for a count: sphere, seed, clustered")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed of generated references")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8427", "address to listen on (host:port; port 0 picks one)")
	fs.StringVar(&f.engine, "engine", "auto", "engine: auto, cpu or gpu")
	fs.IntVar(&f.gpus, "gpus", 0, "GPUs to use (0: all)")
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding the bearer token clients must send (else $GEOKNN_TOKEN); required beyond loopback")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate (PEM): serve HTTPS")
	fs.StringVar(&f.tlsKey, "tls-key", "", "TLS private key (PEM), with --tls-cert")
	fs.StringVar(&f.readyFile, "ready-file", "", "write the address listened on to this file once serving (for scripts; with port 0)")
	fs.Int64Var(&f.maxBody, "max-body", 256<<20, "largest request body, bytes")
	fs.IntVar(&f.maxPoints, "max-points", 1<<22, "most points in one request")
	fs.IntVar(&f.maxK, "max-k", 1024, "largest k")
	fs.DurationVar(&f.queryTimeout, "query-timeout", 30*time.Second, "longest a request's body may take to arrive, its engine call to answer, and its answer to be sent")
	fs.DurationVar(&f.drain, "drain-timeout", 30*time.Second, "longest the drain on SIGTERM waits for requests in flight")
	fs.DurationVar(&f.batchWait, "batch-wait", 0, "how long a batch of more than 256 points waits for more requests while the engine is busy (0: 200us on GPUs, never on the CPU, whose cost a point does not fall with the batch; smaller batches, answered on the CPU index, never wait; negative: never)")
	fs.IntVar(&f.batchPoints, "batch-points", 0, "most points batched into one engine call (0: 256 on the CPU, 65536 on GPUs)")
	fs.IntVar(&f.workers, "workers", 0, "batches answered side by side (0: the cores)")
	fs.IntVar(&f.bulkSlots, "bulk-slots", 4, "bulk (Arrow, 64 KiB and more) requests the engine answers at once, each in buffers kept for the next (page-locked on GPUs); their uploads and downloads hold none")
	fs.BoolVar(&f.logJSON, "log-json", false, "logs as JSON lines (default: text)")
	fs.BoolVar(&f.debug, "debug", false, "log every reference update")
	fs.StringVar(&f.cpuProfile, "cpu-profile", "", "write the Go CPU profile of the server's life (go tool pprof) to this file once drained: where a request's time goes")
	helped, err := parseFlags(fs, serveUsage, args, stdout, stderr)
	if err != nil || helped {
		return err
	}
	return runServe(ctx, f, stderr)
}

// serveToken is the bearer token: --token-file's contents (trimmed), else
// $GEOKNN_TOKEN.
func serveToken(f serveFlags) (string, error) {
	if f.tokenFile != "" {
		b, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("--token-file %s: empty", f.tokenFile)
		}
		return tok, nil
	}
	return strings.TrimSpace(os.Getenv("GEOKNN_TOKEN")), nil
}

// isLoopback says whether addr's host is this machine only.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func runServe(ctx context.Context, f serveFlags, stderr io.Writer) error {
	var h slog.Handler
	level := slog.LevelInfo
	if f.debug {
		level = slog.LevelDebug
	}
	if f.logJSON {
		h = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level})
	} else {
		h = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})
	}
	log := slog.New(h).With("cmd", "knn serve")
	token, err := serveToken(f)
	if err != nil {
		return usageError{err}
	}
	if token == "" && !isLoopback(f.addr) {
		return usagef("--addr %s listens beyond loopback: give a bearer token (--token-file or GEOKNN_TOKEN)", f.addr)
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	eng, err := geoknn.ParseEngine(f.engine)
	if err != nil {
		return usagef("--engine: %v", err)
	}
	opts := geoknn.Options{Engine: eng, GPUs: f.gpus}
	t := time.Now()
	ref, err := loadPoints(ctx, pointsArg{flag: "--ref", arg: f.ref, gen: f.gen, seed: f.seed, onHost: true,
		cols: pointio.ReadOptions{LatColumn: f.latCol, LonColumn: f.lonCol, IDColumn: f.refID}})
	if err != nil {
		return err
	}
	lat, lon := ref.cols.Float64()
	if lat == nil || ref.cols.Len() == 0 {
		return fmt.Errorf("--ref %s: no reference points in float64 columns", f.ref)
	}
	// The searcher says which engine runs; every version of the references
	// is prepared on it (the first by open, the later ones from the one
	// before, Index.Replaced), so that no update opens an engine.
	first, err := geoknn.NewSearcher(opts)
	if err != nil {
		return err
	}
	if fb := first.Fallback(); fb != "" {
		log.Info("running on the CPU", "why", fb)
	}
	kind := first.Engine()
	open := func(p geoknn.Points) (*geoknn.Index, error) {
		if first == nil {
			return nil, errors.New("the engine was opened for the first references only")
		}
		s := first
		first = nil
		x, err := s.NewIndex(p)
		if err != nil {
			s.Close()
		}
		return x, err
	}
	cfg := serve.Config{Open: open, LatRad: lat, LonRad: lon, IDs: ref.ids, Engine: kind.String(), Token: token,
		MaxBodyBytes: f.maxBody, MaxPoints: f.maxPoints, MaxK: f.maxK, QueryTimeout: f.queryTimeout,
		BatchWait: f.batchWait, BatchPoints: f.batchPoints, Workers: f.workers, BulkSlots: f.bulkSlots, Logger: log}
	if cfg.BatchPoints == 0 && kind == geoknn.GPU {
		cfg.BatchPoints = 1 << 16
	}
	if cfg.BatchWait == 0 && kind == geoknn.CPU {
		cfg.BatchWait = -1
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	srv, err := serve.New(ctx, cfg)
	if err != nil {
		if first != nil {
			first.Close()
		}
		return err
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return errors.Join(fmt.Errorf("--addr: %w", err), srv.Close())
	}
	scheme := "http"
	if f.tlsCert != "" {
		scheme = "https"
	}
	log.Info("serving", "url", scheme+"://"+ln.Addr().String(), "references", len(lat), "ids", ref.ids != nil,
		"engine", kind.String(), "load_seconds", time.Since(t).Seconds())
	if f.readyFile != "" {
		if err := os.WriteFile(f.readyFile, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			return errors.Join(fmt.Errorf("--ready-file: %w", err), ln.Close(), srv.Close())
		}
	}
	stop, err := startCPUProfile(f.cpuProfile, stderr)
	if err != nil {
		return errors.Join(err, ln.Close(), srv.Close())
	}
	// The profile is written after the drain, which ctx's end started.
	if err := stop(context.WithoutCancel(ctx), srv.Serve(ctx, ln, f.drain, f.tlsCert, f.tlsKey)); err != nil {
		return err
	}
	log.Info("drained: stopped")
	return nil
}
