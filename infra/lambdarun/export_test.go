package lambdarun

// SetBeforeDeliver makes cfg's instances call f in /next after taking an invocation and
// before writing its payload, so that a test can act in that window deterministically.
func SetBeforeDeliver(cfg *ProcessConfig, f func(requestID string)) { cfg.beforeDeliver = f }
