package message

import (
	"fmt"

	"github.com/sundialhq/sundial/internal/timer"
)

// withUses adds the instance's shared resources (and the lease a slot is held for) to f.
func (f Firing) withUses(in timer.Instance) Firing {
	if len(in.Resources) > 0 {
		f.Uses, f.Lease = in.Resources, in.Lease()
	}
	return f
}

// usesProblem checks a firing's resources: named pools of 1..MaxResourceSlots slots, with
// a positive lease.
func (f Firing) usesProblem() error {
	if len(f.Uses) == 0 {
		if f.Lease != 0 {
			return fmt.Errorf("%w: lease without uses", ErrMalformed)
		}
		return nil
	}
	if len(f.Uses) > timer.MaxUses {
		return fmt.Errorf("%w: %d uses, at most %d", ErrMalformed, len(f.Uses), timer.MaxUses)
	}
	for _, u := range f.Uses {
		if u.Pool == "" || u.Slots < 1 || u.Slots > timer.MaxResourceSlots {
			return fmt.Errorf("%w: uses: pool %q of %d slots", ErrMalformed, u.Pool, u.Slots)
		}
	}
	if f.Lease <= 0 {
		return fmt.Errorf("%w: uses without a positive lease", ErrMalformed)
	}
	return nil
}
