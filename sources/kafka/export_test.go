package kafka

// SetHeldMaxBytes sets the bound of the records held between Reads, for a
// test, and returns what puts it back.
func SetHeldMaxBytes(n int) (restore func()) {
	old := heldMaxBytes
	heldMaxBytes = n
	return func() { heldMaxBytes = old }
}
