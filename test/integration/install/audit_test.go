package install

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// auditEvents are the ServiceAccount's requests as the API server's audit log recorded them.
type auditEvents []auditv1.Event

func readAudit(t *testing.T) auditEvents {
	t.Helper()
	f, err := os.Open(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var events auditEvents
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		var e auditv1.Event
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			t.Fatalf("audit log: %v", err)
		}
		if e.User.Username == userName {
			events = append(events, e)
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		t.Fatalf("the audit log has no request of %s", userName)
	}
	return events
}

// forbidden lists the requests answered 403, one per line.
func (events auditEvents) forbidden() string {
	var b strings.Builder
	for _, e := range events {
		if e.ResponseStatus != nil && e.ResponseStatus.Code == http.StatusForbidden {
			fmt.Fprintf(&b, "  %s %s: %s\n", e.Verb, e.RequestURI, e.ResponseStatus.Message)
		}
	}
	return b.String()
}

// used says whether some request exercised g. An informer's watch counts as its list too: with
// streaming lists, the initial list arrives on the watch, but a reflector falls back to list.
func (events auditEvents) used(g grant) bool {
	for _, e := range events {
		ref := e.ObjectRef
		verb := e.Verb
		if verb == "watch" && g.Verb == "list" {
			verb = "list"
		}
		if ref == nil || verb != g.Verb || ref.APIGroup != g.Group {
			continue
		}
		resource := ref.Resource
		if ref.Subresource != "" {
			resource += "/" + ref.Subresource
		}
		if resource == g.Resource && (g.Namespace == "" || ref.Namespace == g.Namespace) {
			return true
		}
	}
	return false
}

// unreachedRules are granted for paths this scenario does not take, each with the reason; docs/
// operations.md lists them among the rules.
var unreachedRules = map[grant]string{
	{Group: "scheduling.queue-scheduler.io", Resource: "queues", Verb: "get"}:        "a Command's queue admitted but not in the cache yet",
	{Group: "", Resource: "secrets", Verb: "update"}:                                 "the webhook's serving certificate renewed",
	{Group: "scheduling.queue-scheduler.io", Resource: "podgroups", Verb: "delete"}:  "finished PodGroups are deleted after their queue is",
	{Group: "scheduling.queue-scheduler.io", Resource: "queueunits", Verb: "delete"}: "a unit is deleted a minute after its job is gone, or after its queue is",
	{Group: "scheduling.queue-scheduler.io", Resource: "podgroups", Verb: "update"}:  "the spec of a mirrored PodGroup changes",
}

// unreachedGroups are API groups this cluster does not serve: job kinds, whose units are read and
// released with these rules where the kinds are installed, and Volcano's PodGroups.
var unreachedGroups = map[string]bool{"kubeflow.org": true, "ray.io": true, "jobset.x-k8s.io": true, "scheduling.volcano.sh": true}

// unusedGrants returns the grants no request used, but for the unreached ones.
func unusedGrants(grants []grant, events auditEvents) []grant {
	var out []grant
	for _, g := range grants {
		key := g
		key.Namespace, key.Name = "", ""
		if _, ok := unreachedRules[key]; ok || unreachedGroups[g.Group] || events.used(g) {
			continue
		}
		out = append(out, g)
	}
	return out
}
