package emulator

import "syscall"

// parentDeath has the kernel kill the engine if the process that started it dies (a killed
// `sundial up` or test binary must not leave DynamoDB Local running).
func parentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
