// Command queue-scheduler is kube-scheduler with the queue-scheduler plugins: queues with fair share,
// gangs, reclaim and suspension, on the upstream scheduling framework.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"

	"github.com/queue-scheduler/queue-scheduler/pkg/scheduler"
)

func main() {
	os.Exit(cli.Run(scheduler.NewCommand()))
}
