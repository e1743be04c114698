package ranks

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/geoknn/geoknn/mpi"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// The ranks write one output together, each its own rows at their
// offsets in the one file, instead of gathering every answer to rank 0:
// .npz arrays at offsets computed from the counts (the arrays' CRCs
// combined at rank 0), CSV and Parquet parts after the ranks exchange
// their lengths: counted without formatting for CSV (csvio.AnswersSize),
// so that every rank writes straight into the file; known once encoded
// for Parquet and CSV with identifiers: every rank after the first
// writes its part to a file beside the output, copied in once the
// lengths are known (in the kernel, copy_file_range, where the
// filesystem allows), or, where the disk lacks the room for those
// (room.go), encodes its Parquet answers twice (once into a counter,
// once into the file). Rank 0
// writes the zip structure or the Parquet footer, from every rank's row
// groups' metadata. The file is a temporary one of rank 0's, renamed into
// place only when every rank has written and synced its part; any failure
// or signal removes it. It needs a filesystem every rank sees (one host,
// or a cluster's shared one): WriteOwn is for the rest.

// Output is one file the ranks of a job write together.
type Output struct {
	World      mpi.Comm
	Rank, Size int
	// Path is the file, written by rank 0's temporary beside it.
	Path string
	// Format is the file's, one the ranks write together (Together).
	Format string
	// N is the observations of the whole job.
	N int
	// counted is the parts this rank counted before writing (a test's
	// view of which way Write took).
	counted int
	// free, where set, stands for the output filesystem's free bytes
	// (a test's choice between spilling and counting).
	free func() (uint64, bool)
}

// Part is a rank's answers as the output's writers take them: its
// observations numbered from Answers.Base in the whole job.
type Part struct {
	Kind    stream.AnswerKind
	K       int
	Answers stream.Answers
	Entries int64 // the radius lists' entries
	Rows    *Rows // the answers with identifiers, written instead where set
}

// NearestPart is the rank's nearest answers a, its first observation
// the whole job's lo.
func NearestPart(a stream.Answers, lo int) Part {
	a.Base = lo
	return Part{Kind: stream.KindNearest, K: 1, Answers: a}
}

// KPart is the rank's k nearest answers a, k a row.
func KPart(a stream.Answers, k, lo int) Part {
	a.Base = lo
	return Part{Kind: stream.KindKNearest, K: k, Answers: a}
}

// WithinPart is the rank's radius answers a: counts, or with lists their
// entries.
func WithinPart(a stream.Answers, lists bool, entries int64, lo int) Part {
	a.Base = lo
	if lists {
		return Part{Kind: stream.KindWithinLists, K: 1, Answers: a, Entries: entries}
	}
	return Part{Kind: stream.KindWithinCounts, K: 1, Answers: a}
}

// Rows are answers with identifier columns, a row of values at a time:
// Values typed (Parquet), Text as CSV writes them; both are called from
// several goroutines at once.
type Rows struct {
	Fields []arrow.Field
	N      int
	Values func(i int, add func(vals ...any))
	Text   func(i int, add func(vals ...string))
}

// header is the rows' CSV header: their fields' names.
func (t Rows) header() []string {
	h := make([]string, len(t.Fields))
	for k, f := range t.Fields {
		h[k] = f.Name
	}
	return h
}

// Write writes the rank's answers p into the output with the other
// ranks', all or nothing, once every rank has answered (a rank that
// failed before has ended the job). Every rank returns the same verdict.
func (o *Output) Write(ctx context.Context, p Part) error {
	t, ok := togetherFor(o.Format)
	if !ok || (p.Rows != nil && t.rows == nil) {
		return fmt.Errorf("the ranks cannot write %s together", o.Format)
	}
	s, err := o.create(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	if err = AllOK(o.World, s.open()); err == nil {
		if p.Rows != nil {
			err = t.rows(o, ctx, s.f, *p.Rows)
		} else {
			err = t.answers(o, ctx, s.f, p)
		}
	}
	if err == nil {
		err = AllOK(o.World, s.sync())
	}
	if err = o.settle(ctx, s, err); err != nil {
		return fmt.Errorf("writing %s: %w", o.Path, err)
	}
	return nil
}

// sharedFile is the rank's handle on the output being written.
type sharedFile struct {
	f         *os.File
	writeback func()                // stops the rank's early write-back (pointio.StartWriteback)
	out       *pointio.SharedOutput // rank 0's
	stop      func() bool           // rank 0: stops the removal a signal makes
	name      string
}

// create has rank 0 create the temporary file, once every rank has
// answered, and tells every rank its name. A signal removes it.
func (o *Output) create(ctx context.Context) (*sharedFile, error) {
	if err := AllOK(o.World, nil); err != nil {
		return nil, err
	}
	s := &sharedFile{}
	var err error
	if o.Rank == 0 {
		if s.out, err = pointio.CreateShared(o.Path); err == nil {
			s.name, s.stop = s.out.Temp, context.AfterFunc(ctx, s.out.Remove)
		}
	}
	if err = AllOK(o.World, err); err != nil {
		return nil, err
	}
	names, err := o.World.BcastStrings([]string{s.name}, 0)
	if err != nil {
		return nil, err
	}
	s.name = names[0]
	return s, nil
}

// open opens rank 0's temporary file.
func (s *sharedFile) open() error {
	f, err := os.OpenFile(s.name, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("rank 0's temporary output (the ranks write --out together, on a filesystem every rank sees; else use --out-per-rank): %w", err)
	}
	s.f, s.writeback = f, pointio.StartWriteback(f)
	return nil
}

// sync makes the rank's part durable before rank 0 renames the file.
func (s *sharedFile) sync() error {
	s.writeback()
	if err := s.f.Sync(); err != nil {
		return err
	}
	err := s.f.Close()
	s.f = nil
	return err
}

func (s *sharedFile) close() {
	if s.f != nil {
		s.writeback()
		s.f.Close()
	}
}

// settle ends the write as every rank found it (err, the same verdict on
// every rank): rank 0 renames the file into place, or removes it; every
// rank learns how that went before any leaves.
func (o *Output) settle(ctx context.Context, s *sharedFile, err error) error {
	if o.Rank == 0 {
		if err == nil && !s.stop() {
			err = context.Cause(ctx) // a signal came: the file is gone
		}
		if err == nil {
			err = s.out.Commit()
		}
		if err != nil {
			s.out.Remove()
		}
	}
	return AllOK(o.World, err)
}
