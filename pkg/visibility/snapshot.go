package visibility

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// forecastSnapshots serves ForecastSnapshot, cluster-scoped, get only: its one object, "current",
// is forecast from the scheduler's state at each request. It shows every namespace's pending work
// and every queue's, so who may get it is an administrator's choice (queue-scheduler-queue-admin).
type forecastSnapshots struct {
	reader
}

var (
	_ rest.Getter               = &forecastSnapshots{}
	_ rest.Scoper               = &forecastSnapshots{}
	_ rest.SingularNameProvider = &forecastSnapshots{}
)

func (*forecastSnapshots) New() runtime.Object     { return &visibilityv1beta1.ForecastSnapshot{} }
func (*forecastSnapshots) Destroy()                {}
func (*forecastSnapshots) NamespaceScoped() bool   { return false }
func (*forecastSnapshots) GetSingularName() string { return "forecastsnapshot" }

func (s *forecastSnapshots) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	if name != visibilityv1beta1.CurrentSnapshot {
		return nil, apierrors.NewNotFound(visibilityv1beta1.Resource(visibilityv1beta1.ForecastSnapshots), name)
	}
	return s.source.ForecastSnapshot(ctx)
}
