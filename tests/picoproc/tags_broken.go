//go:build picobroken

package picoproc

var buildTags = []string{"-tags", "picobroken"}
