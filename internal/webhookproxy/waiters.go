package webhookproxy

import (
	"sync"
)

// waiters wakes callers holding ?wait=true when their delivery finishes
// in this process; a delivery finished by another herald is seen by
// polling.
type waiters struct {
	mu sync.Mutex
	m  map[int64][]chan struct{}
}

func newWaiters() *waiters { return &waiters{m: map[int64][]chan struct{}{}} }

// wait returns a channel closed when id finishes, and a cancel func.
func (w *waiters) wait(id int64) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	w.mu.Lock()
	w.m[id] = append(w.m[id], ch)
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		list := w.m[id]
		for i, c := range list {
			if c == ch {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(w.m, id)
		} else {
			w.m[id] = list
		}
	}
}

func (w *waiters) notify(id int64) {
	w.mu.Lock()
	list := w.m[id]
	delete(w.m, id)
	w.mu.Unlock()
	for _, ch := range list {
		close(ch)
	}
}
