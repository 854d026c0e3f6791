// Command kubectl-queue is the kubectl plugin for queue-scheduler queues: put it on the PATH and run
// `kubectl queue`.
package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/queue-scheduler/queue-scheduler/pkg/kubectlqueue"
)

func main() {
	cmd := kubectlqueue.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}
