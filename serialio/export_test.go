package serialio

// SetAfterOpen sets the seam called between a device's opening and its settings.
func SetAfterOpen(f func(path string)) { afterOpen = f }
