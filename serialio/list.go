package serialio

import (
	"fmt"
	"slices"
	"strings"

	"go.bug.st/serial"
	"go.bug.st/serial/enumerator"
)

// Listed is one serial port of the machine, as `scoreboard ports` shows it.
type Listed struct {
	Device       string `json:"device"`
	ByID         string `json:"by_id,omitempty"`
	USB          bool   `json:"usb"`
	VID          string `json:"vid,omitempty"`
	PID          string `json:"pid,omitempty"`
	SerialNumber string `json:"serial_number,omitempty"`
	Manufacturer string `json:"manufacturer,omitempty"`
	Product      string `json:"product,omitempty"`
}

// ListPorts lists the machine's serial ports, each with its link in ByIDDir; warn
// says why the USB details are missing, if they are.
func ListPorts() (ports []Listed, warn error) {
	return List(enumerator.GetDetailedPortsList, serial.GetPortsList, ByIDDir)
}

// List lists the ports enumerate finds, each with the link in byIDDir that points
// at it. go.bug.st/serial's enumerator fails as a whole when one USB device lacks a
// sysfs attribute (a serial number, say); then the ports are listed by name only,
// from names, and warn says why.
func List(enumerate func(...func(vid, pid string) bool) ([]*enumerator.PortDetails, error),
	names func() ([]string, error), byIDDir string) (ports []Listed, warn error) {
	details, err := enumerate()
	if err != nil {
		warn = fmt.Errorf("no USB details: %w", err)
		list, err := names()
		if err != nil {
			return nil, fmt.Errorf("%w; listing ports: %w", warn, err)
		}
		for _, n := range list {
			details = append(details, &enumerator.PortDetails{Name: n})
		}
	}
	byID := Links(byIDDir)
	for _, d := range details {
		if d == nil || d.Name == "" {
			continue // the enumerator's placeholder for a tty without a device
		}
		ports = append(ports, Listed{
			Device:       d.Name,
			ByID:         byID[d.Name],
			USB:          d.IsUSB,
			VID:          d.VID,
			PID:          d.PID,
			SerialNumber: d.SerialNumber,
			Manufacturer: d.Manufacturer,
			Product:      d.Product,
		})
	}
	slices.SortFunc(ports, func(a, b Listed) int { return strings.Compare(a.Device, b.Device) })
	return ports, warn
}
