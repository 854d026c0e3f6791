// Command kubectl is upstream kubectl, built from the k8s.io/kubectl version pinned in hack/tools/go.mod,
// as k8s.io/kubernetes/cmd/kubectl builds it. The docs-commands test (test/integration/docs) runs the
// documentation's commands with it, so that they are checked against a kubectl of the release the
// project embeds rather than whichever one a machine happens to have.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	// Client auth plugins (exec, OIDC), as upstream's kubectl registers them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	// The verbosity is parsed before the command is built, as upstream does, so that klog honours
	// -v while kubectl looks for plugins and reads .kuberc.
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) //nolint:errcheck
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
