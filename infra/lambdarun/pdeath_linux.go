package lambdarun

import "syscall"

// parentDeath has the kernel kill a bootstrap when the process that started it dies without
// stopping it (a `sundial up` killed with SIGKILL must not leave its function processes
// polling a Runtime API that is gone). The signal follows the thread that started the
// process: Go keeps its threads for the life of the process unless a goroutine exits
// locked to one, which nothing that starts bootstraps does.
func parentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
