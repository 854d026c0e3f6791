package visibility

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// APIService registers the live view with the API server's aggregation layer, served by the named
// Service at port. Its caBundle is left to the scheduler, which writes its webhook CA there.
func APIService(namespace, service string, port int32) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService"},
		ObjectMeta: metav1.ObjectMeta{Name: config.VisibilityAPIService},
		Spec: apiregistrationv1.APIServiceSpec{
			Group:                visibilityv1beta1.GroupName,
			Version:              visibilityv1beta1.SchemeGroupVersion.Version,
			Service:              &apiregistrationv1.ServiceReference{Namespace: namespace, Name: service, Port: &port},
			GroupPriorityMinimum: 100,
			VersionPriority:      100,
		},
	}
}
