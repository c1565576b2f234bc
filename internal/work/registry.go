package work

import (
	"maps"
	"slices"
	"time"

	"github.com/riverqueue/river"
)

// Registry collects the job kinds and periodic jobs features provide, so
// the client knows whether it has anything to work. Each kind is
// registered through the view of the part of herald that owns it
// (Section), whose locale section holds the kind's label.
type Registry struct {
	*kinds
	section string
}

// kinds is what every section's view of a registry shares.
type kinds struct {
	workers *river.Workers
	// sections maps each kind to the locale section that labels it.
	sections map[string]string
	periodic []*river.PeriodicJob
	// timeouts are the lanes', set by NewClient before any job runs.
	timeouts LaneTimeouts
}

// NewRegistry returns an empty registry whose kinds herald itself labels
// (section "herald") until a Section view registers them.
func NewRegistry() *Registry {
	return &Registry{kinds: &kinds{workers: river.NewWorkers(), sections: map[string]string{}, timeouts: DefaultJobTimeouts},
		section: "herald"}
}

// Section is the view of r through which a feature registers its kinds:
// their labels are the feature's, in its locale section.
func (r *Registry) Section(name string) *Registry { return &Registry{kinds: r.kinds, section: name} }

// Register adds the worker for one job kind; a kind registered twice panics,
// as river.AddWorker does, because that is a wiring bug. The job's lane
// decides its timeout, whatever the worker's own Timeout says.
func Register[T river.JobArgs](r *Registry, w river.Worker[T]) {
	var args T
	river.AddWorker[T](r.workers, laneWorker[T]{Worker: w, r: r.kinds})
	r.sections[args.Kind()] = r.section
}

// laneWorker tells River the lane's backstop as the job's timeout, so
// River's executor and its rescuer both hold the job to its lane: a job
// whose process died runs again soon after, not after River's default
// hour.
type laneWorker[T river.JobArgs] struct {
	river.Worker[T]
	r *kinds
}

func (w laneWorker[T]) Timeout(j *river.Job[T]) time.Duration {
	return backstop(w.r.timeouts, LaneOf(j.Queue))
}

// Periodic adds a job River inserts on a schedule; its kind must be
// registered too.
func (r *Registry) Periodic(j *river.PeriodicJob) { r.periodic = append(r.periodic, j) }

// Kinds lists the registered job kinds, sorted.
func (r *Registry) Kinds() []string { return slices.Sorted(maps.Keys(r.sections)) }

// LabelKey is the locale key of a kind's label, what the job does in an
// admin's words: "<section>.jobs.<kind>", e.g. "tickets.jobs.tickets_open".
// It is "" for a kind not registered here.
func (r *Registry) LabelKey(kind string) string {
	s, ok := r.sections[kind]
	if !ok {
		return ""
	}
	return s + ".jobs." + kind
}
