package work

import (
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/config"
)

// Registry collects the job kinds and periodic jobs features provide, so
// the client knows whether it has anything to work.
type Registry struct {
	workers  *river.Workers
	kinds    []string
	periodic []*river.PeriodicJob
	// timeouts are the lanes', set by NewClient before any job runs.
	timeouts config.LaneTimeouts
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{workers: river.NewWorkers(), timeouts: config.DefaultJobTimeouts}
}

// Register adds the worker for one job kind; a kind registered twice panics,
// as river.AddWorker does, because that is a wiring bug. The job's lane
// decides its timeout, whatever the worker's own Timeout says.
func Register[T river.JobArgs](r *Registry, w river.Worker[T]) {
	var args T
	river.AddWorker[T](r.workers, laneWorker[T]{Worker: w, r: r})
	r.kinds = append(r.kinds, args.Kind())
}

// laneWorker tells River the lane's backstop as the job's timeout, so
// River's executor and its rescuer both hold the job to its lane: a job
// whose process died runs again soon after, not after River's default
// hour.
type laneWorker[T river.JobArgs] struct {
	river.Worker[T]
	r *Registry
}

func (w laneWorker[T]) Timeout(j *river.Job[T]) time.Duration {
	return backstop(w.r.timeouts, Lane(j.Queue))
}

// Periodic adds a job River inserts on a schedule; its kind must be
// registered too.
func (r *Registry) Periodic(j *river.PeriodicJob) { r.periodic = append(r.periodic, j) }

// Kinds lists the registered job kinds, sorted.
func (r *Registry) Kinds() []string {
	out := slices.Clone(r.kinds)
	slices.Sort(out)
	return out
}
