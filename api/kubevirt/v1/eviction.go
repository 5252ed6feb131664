package v1

// EvictionStrategyOr is the instance's evictionStrategy, or def (the cluster's default) when
// it names none.
func (s *VirtualMachineInstanceSpec) EvictionStrategyOr(def EvictionStrategy) EvictionStrategy {
	if s.EvictionStrategy != nil {
		return *s.EvictionStrategy
	}
	return def
}
