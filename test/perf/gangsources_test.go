package perf

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	upstreamscheduling "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	spclient "sigs.k8s.io/scheduler-plugins/pkg/generated/clientset/versioned"
	vcv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	vcclient "volcano.sh/apis/pkg/client/clientset/versioned"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/pkg/queueclient"
)

var gangSources = flag.String("gang-sources", "scheduler-plugins,volcano,native",
	"the other gang APIs the gang case runs through queue-scheduler, besides its own PodGroup and upstream's GangScheduling (comma-separated; none: \"\")")

// gangSides are the sides of the gang case: upstream's, queue-scheduler's own PodGroup and the
// -gang-sources.
func gangSides() ([]gangSide, error) {
	sides := []gangSide{upstreamGangs, ourGangs}
	sources := map[string]gangSide{"scheduler-plugins": schedulerPluginsGangs, "volcano": volcanoGangs, "native": nativeGangs}
	for _, name := range strings.Split(*gangSources, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		side, ok := sources[name]
		if !ok {
			return nil, fmt.Errorf("-gang-sources: %q is not a gang source (scheduler-plugins, volcano, native)", name)
		}
		sides = append(sides, side)
	}
	return sides, nil
}

// The gang case's sides for the other gang APIs, all scheduled by queue-scheduler: their PodGroups
// are mirrored and admitted by the controller before the pods are released (the time to mirror and
// admit is not measured, as for queue-scheduler's own PodGroups, and as the upstream side's
// PodGroups too exist before its pods are released).
var (
	schedulerPluginsGangs = gangSide{
		name:          "queue-scheduler, scheduler-plugins PodGroup",
		schedulerName: schedulingv1beta1.SchedulerName,
		createGroup: func(ctx context.Context, c *localcluster.Cluster, group string, gang int) error {
			pg := &spv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: group, Namespace: gangNamespace,
				Labels: map[string]string{schedulingv1beta1.QueueLabel: gangQueue(gang)}}, Spec: spv1alpha1.PodGroupSpec{MinMember: int32(*gangSize)}}
			_, err := spClient(c).SchedulingV1alpha1().PodGroups(gangNamespace).Create(ctx, pg, metav1.CreateOptions{})
			return err
		},
		join: func(pod *v1.Pod, group string) { pod.Labels[spv1alpha1.PodGroupLabel] = group },
		deleteGroups: func(ctx context.Context, c *localcluster.Cluster) error {
			return spClient(c).SchedulingV1alpha1().PodGroups(gangNamespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		},
		admitted: true,
	}
	volcanoGangs = gangSide{
		name:          "queue-scheduler, Volcano PodGroup",
		schedulerName: schedulingv1beta1.SchedulerName,
		createGroup: func(ctx context.Context, c *localcluster.Cluster, group string, gang int) error {
			pg := &vcv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: group, Namespace: gangNamespace},
				Spec: vcv1beta1.PodGroupSpec{MinMember: int32(*gangSize), Queue: gangQueue(gang)}}
			_, err := vcClient(c).SchedulingV1beta1().PodGroups(gangNamespace).Create(ctx, pg, metav1.CreateOptions{})
			return err
		},
		join: func(pod *v1.Pod, group string) {
			pod.Annotations = map[string]string{vcv1beta1.KubeGroupNameAnnotationKey: group}
		},
		deleteGroups: func(ctx context.Context, c *localcluster.Cluster) error {
			return vcClient(c).SchedulingV1beta1().PodGroups(gangNamespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		},
		admitted: true,
	}
	// nativeGangs are the upstream side's PodGroups, scheduled by queue-scheduler: kube-scheduler's
	// pod-group cycle and GangScheduling with the queue plugins beside them.
	nativeGangs = gangSide{
		name:          "queue-scheduler, native PodGroup",
		schedulerName: schedulingv1beta1.SchedulerName,
		createGroup: func(ctx context.Context, c *localcluster.Cluster, group string, gang int) error {
			pg := &upstreamscheduling.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Name: group, Namespace: gangNamespace, Labels: map[string]string{schedulingv1beta1.QueueLabel: gangQueue(gang)}},
				Spec: upstreamscheduling.PodGroupSpec{
					WorkloadRef:      &upstreamscheduling.WorkloadReference{WorkloadName: gangWorkload, TemplateName: gangTemplate},
					SchedulingPolicy: gangPolicy(),
				},
			}
			_, err := c.Kube.SchedulingV1beta1().PodGroups(gangNamespace).Create(ctx, pg, metav1.CreateOptions{})
			return err
		},
		join: func(pod *v1.Pod, group string) {
			pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(group)}
		},
		deleteGroups: upstreamGangs.deleteGroups,
		admitted:     true,
	}
)

func spClient(c *localcluster.Cluster) spclient.Interface {
	return spclient.NewForConfigOrDie(queueclient.JSONConfig(c.Config))
}

func vcClient(c *localcluster.Cluster) vcclient.Interface {
	return vcclient.NewForConfigOrDie(queueclient.JSONConfig(c.Config))
}

// waitAdmitted waits until the controller has admitted the run's gangs groups (mirrored them first,
// for another API's); it names a group that was not, and how it stands, when they were not in time.
func waitAdmitted(ctx context.Context, c *localcluster.Cluster, group func(int) string, gangs int) error {
	missing := ""
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, *bindTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := c.Queues.SchedulingV1beta1().PodGroups(gangNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		mirrors := map[string]*schedulingv1beta1.PodGroup{}
		for i := range list.Items {
			mirrors[list.Items[i].Name] = &list.Items[i]
		}
		for g := range gangs {
			pg, ok := mirrors[group(g)]
			switch {
			case !ok:
				missing = group(g) + ": not there (or not mirrored)"
				return false, nil
			case pg.Status.Phase != schedulingv1beta1.PodGroupInqueue:
				missing = fmt.Sprintf("%s: phase %q, conditions %v", pg.Name, pg.Status.Phase, pg.Status.Conditions)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%w; %s%s", err, missing, eventsOf(c, strings.SplitN(missing, ":", 2)[0]))
	}
	return nil
}

// eventsOf lists the messages of the events about the objects named name in the gang namespace.
func eventsOf(c *localcluster.Cluster, name string) string {
	events, err := c.Kube.CoreV1().Events(gangNamespace).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return "; events: " + err.Error()
	}
	var out strings.Builder
	for _, e := range events.Items {
		fmt.Fprintf(&out, "; %s %s: %s", e.InvolvedObject.Kind, e.Reason, e.Message)
	}
	return out.String()
}

// reportGangSources records a row per gang source: queue-scheduler over upstream's GangScheduling.
func reportGangSources(measured map[string]*gangMeasures) {
	upstream := measured[upstreamGangs.name]
	for _, side := range []gangSide{schedulerPluginsGangs, volcanoGangs, nativeGangs} {
		ours, ok := measured[side.name]
		if !ok {
			continue
		}
		var ratio []float64
		for r := range ours.rate {
			ratio = append(ratio, ours.rate[r]/upstream.rate[r])
		}
		rs := spreadOf(ratio)
		record(row{Case: fmt.Sprintf("Gangs — %s, %d gangs of %d on %d nodes", side.name, *gangCount, *gangSize, *gangNodes),
			Ours: ours.format(), Upstream: upstream.format(), Ratio: rs.format(3, "") + " (pods/s)", Target: "≥ 1.0 (not slower)",
			Values: map[string]float64{"ours": spreadOf(ours.rate).median, "upstream": spreadOf(upstream.rate).median, "ratio": rs.median,
				"ours_p99_ms": spreadOf(ours.p99).median, "upstream_p99_ms": spreadOf(upstream.p99).median}})
	}
}
