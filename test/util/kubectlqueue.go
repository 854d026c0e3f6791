package util

import (
	"bytes"
	"context"
	"strings"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/queue-scheduler/queue-scheduler/pkg/kubectlqueue"
)

// KubectlQueue runs `kubectl queue args…` in-process against the cluster of kubeconfig and returns
// what it printed, standard output and error together.
func KubectlQueue(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := kubectlqueue.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig}, args...))
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}
