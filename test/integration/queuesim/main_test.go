package queuesim

import (
	"flag"
	"os"
	"testing"

	"github.com/queue-scheduler/queue-scheduler/test/clustertest"
)

// TestMain silences the control plane each test starts, unless QS_TEST_LOGS asks for its logs.
func TestMain(m *testing.M) {
	flag.Parse()
	clustertest.SetUpLogs()
	os.Exit(m.Run())
}
