package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// updater applies reference updates: one goroutine, so that versions are
// made one after the other; the updates queued while one version is being
// prepared go into the next together (one index build for many small
// moves). A version is prepared on the engine of the one before
// (Index.Replaced): no engine is opened for it, so that on GPUs an update
// costs the index build and the references' upload, not a driver start.
type updater struct {
	in    chan *updateJob
	store *refStore
	m     *metrics
	log   *slog.Logger
	ctx   context.Context
	stop  chan struct{}
	wg    sync.WaitGroup
}

type updateJob struct {
	u    Update
	done chan updateResult // buffered
}

type updateResult struct {
	version uint64
	err     error
}

// maxCoalesced bounds the moves one version takes from the queue.
const maxCoalesced = 1 << 22

func newUpdater(ctx context.Context, store *refStore, m *metrics, log *slog.Logger) *updater {
	u := &updater{in: make(chan *updateJob, 1024), store: store, m: m, log: log, ctx: ctx, stop: make(chan struct{})}
	u.wg.Add(1)
	go u.loop()
	return u
}

func (u *updater) close() {
	close(u.stop)
	u.wg.Wait()
}

// submit queues an update and waits for the version that has it.
func (u *updater) submit(ctx context.Context, up Update) (uint64, error) {
	j := &updateJob{u: up, done: make(chan updateResult, 1)}
	select {
	case u.in <- j:
	case <-ctx.Done():
		return 0, ctxErr(ctx)
	case <-u.stop:
		return 0, errDraining
	}
	select {
	case r := <-j.done:
		return r.version, r.err
	case <-ctx.Done():
		// It may still be applied: the client cannot know, as with any
		// request cut off.
		return 0, ctxErr(ctx)
	}
}

func (u *updater) loop() {
	defer u.wg.Done()
	for {
		var first *updateJob
		select {
		case first = <-u.in:
		case <-u.stop:
			for {
				select {
				case j := <-u.in:
					j.done <- updateResult{err: errDraining}
				default:
					return
				}
			}
		}
		jobs := []*updateJob{first}
		moves := len(first.u.Moves)
	more:
		for moves < maxCoalesced {
			select {
			case j := <-u.in:
				jobs = append(jobs, j)
				moves += len(j.u.Moves)
			default:
				break more
			}
		}
		u.apply(jobs)
	}
}

// apply makes one version of the jobs that apply cleanly; each job that
// does not is answered with its error and leaves the set as it was.
func (u *updater) apply(jobs []*updateJob) {
	t := time.Now()
	cur := u.store.acquire()
	if cur == nil {
		for _, j := range jobs {
			j.done <- updateResult{err: errDraining}
		}
		return
	}
	// cur stays held while the next version is prepared from its index:
	// the next shares its engine (Index.Replaced), which must stay open.
	defer cur.release()
	w := fork(cur)
	version := cur.version + 1
	var ok []*updateJob
	moved := 0
	for _, j := range jobs {
		if err := w.apply(j.u); err != nil {
			j.done <- updateResult{err: err}
			continue
		}
		ok = append(ok, j)
		moved += len(j.u.Moves)
	}
	if len(ok) == 0 {
		return
	}
	next, err := newSnapshot(version, w.lat, w.lon, w.ids, w.byID, cur.index.Replaced)
	if err != nil {
		err = fmt.Errorf("preparing version %d: %w", version, err)
		u.log.Error("reference update failed", "err", err)
		for _, j := range ok {
			j.done <- updateResult{err: err}
		}
		return
	}
	u.store.publish(next)
	u.m.updates.Add(uint64(len(ok)))
	u.m.moved.Add(uint64(moved))
	u.log.Debug("references updated", "version", version, "requests", len(ok), "moved", moved, "references", next.Len(),
		"seconds", time.Since(t).Seconds())
	for _, j := range ok {
		j.done <- updateResult{version: version}
	}
}

// update answers POST /v1/references: moves (or with replace, replaces)
// references by id, and answers the version that has the change.
func (s *Server) update(w http.ResponseWriter, r *http.Request) error {
	var up Update
	var err error
	if isArrow(r.Header.Get("Content-Type")) {
		up, err = s.arrowUpdate(r)
	} else {
		up, err = s.jsonUpdateOf(r)
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.QueryTimeout)
	defer cancel()
	v, err := s.u.submit(ctx, up)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"version":%d,"moved":%d}`+"\n", v, len(up.Moves))
	return nil
}

func (s *Server) jsonUpdateOf(r *http.Request) (Update, error) {
	var in jsonUpdate
	if err := decodeJSON(r.Body, &in); err != nil {
		return Update{}, err
	}
	up := Update{Replace: in.Replace, NoIDs: in.Replace && in.ID.v == nil}
	if err := s.moves(&up, in.ID.v, in.Lat.v, in.Lon.v); err != nil {
		return Update{}, err
	}
	return up, nil
}

// moves checks an update's columns and fills up.Moves.
func (s *Server) moves(up *Update, ids []string, lat, lon []float64) error {
	n := len(lat)
	switch {
	case len(lon) != n:
		return fieldErr("lon", fmt.Sprintf("%d longitudes for %d latitudes", len(lon), n))
	case n > s.cfg.MaxPoints:
		return tooLarge("lat", fmt.Sprintf("%d points: more than the %d a request takes (--max-points)", n, s.cfg.MaxPoints))
	case ids == nil && !up.NoIDs:
		return fieldErr("id", "required: the ids of the references to move")
	case ids != nil && len(ids) != n:
		return fieldErr("id", fmt.Sprintf("%d ids for %d points", len(ids), n))
	case n == 0 && !up.Replace:
		return fieldErr("id", "no references to move")
	}
	up.Moves = make([]Move, n)
	for i := range n {
		if err := checkDegrees(i, lat[i], lon[i]); err != nil {
			return err
		}
		up.Moves[i] = Move{LatDeg: lat[i], LonDeg: wrapLon(lon[i])}
		if ids != nil {
			up.Moves[i].ID = ids[i]
		}
	}
	return nil
}
