package work

import (
	"slices"

	"github.com/riverqueue/river"
)

// Registry collects the job kinds and periodic jobs features provide, so
// the client knows whether it has anything to work.
type Registry struct {
	workers  *river.Workers
	kinds    []string
	periodic []*river.PeriodicJob
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{workers: river.NewWorkers()} }

// Register adds the worker for one job kind; a kind registered twice panics,
// as river.AddWorker does, because that is a wiring bug.
func Register[T river.JobArgs](r *Registry, w river.Worker[T]) {
	var args T
	river.AddWorker(r.workers, w)
	r.kinds = append(r.kinds, args.Kind())
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
