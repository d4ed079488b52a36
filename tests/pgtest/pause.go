package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Pause stops the server's processes (the postmaster and every process it
// has started) with SIGSTOP for d, as a stalled machine would, and resumes
// them: connections open meanwhile hang rather than fail.
func Pause(d time.Duration) error {
	pids, err := serverProcesses()
	if err != nil {
		return err
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	time.Sleep(d)
	for i := len(pids) - 1; i >= 0; i-- {
		syscall.Kill(pids[i], syscall.SIGCONT)
	}
	return nil
}

// serverProcesses lists the postmaster of $PICOMQ_PG_PID_FILE, then its
// children.
func serverProcesses() ([]int, error) {
	path := os.Getenv(EnvPIDFile)
	if path == "" {
		return nil, fmt.Errorf("pgtest: %s is not set; run the tests through tests/run.sh", EnvPIDFile)
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	first, _, _ := strings.Cut(string(body), "\n")
	postmaster, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return nil, fmt.Errorf("pgtest: %s: no process id on its first line", path)
	}
	out, err := exec.Command("pgrep", "-P", strconv.Itoa(postmaster)).Output()
	if err != nil {
		return nil, fmt.Errorf("pgtest: the children of postmaster %d: %w", postmaster, err)
	}
	pids := []int{postmaster}
	for _, field := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(field); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
