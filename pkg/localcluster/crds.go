package localcluster

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/queue-scheduler/queue-scheduler/manifests"
)

// crdEstablishTimeout bounds how long the API server may take to serve a new CRD.
const crdEstablishTimeout = 30 * time.Second

// loadCRDs decodes the CRDs of fsys that match glob.
func loadCRDs(fsys fs.FS, glob string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(fsys, glob)
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", f, err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// InstallCRDs creates or updates the queue-scheduler CRDs and waits until each is established.
func InstallCRDs(ctx context.Context, cfg *rest.Config) error {
	return InstallCRDsFrom(ctx, cfg, manifests.CRDs, "crds/*.yaml")
}

// InstallCRDsFrom creates or updates the CRDs of fsys that match glob and waits until each is
// established.
func InstallCRDsFrom(ctx context.Context, cfg *rest.Config, fsys fs.FS, glob string) error {
	crds, err := loadCRDs(fsys, glob)
	if err != nil {
		return err
	}
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range crds {
		if err := createOrUpdateCRD(ctx, api, crd); err != nil {
			return err
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, api, crd.Name); err != nil {
			return err
		}
	}
	return nil
}

type crdAPI interface {
	Create(context.Context, *apiextensionsv1.CustomResourceDefinition, metav1.CreateOptions) (*apiextensionsv1.CustomResourceDefinition, error)
	Get(context.Context, string, metav1.GetOptions) (*apiextensionsv1.CustomResourceDefinition, error)
	Update(context.Context, *apiextensionsv1.CustomResourceDefinition, metav1.UpdateOptions) (*apiextensionsv1.CustomResourceDefinition, error)
}

func createOrUpdateCRD(ctx context.Context, api crdAPI, crd *apiextensionsv1.CustomResourceDefinition) error {
	_, err := api.Create(ctx, crd, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("create CRD %s: %w", crd.Name, err)
		}
		return nil
	}
	existing, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get CRD %s: %w", crd.Name, err)
	}
	crd.ResourceVersion = existing.ResourceVersion
	if _, err := api.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update CRD %s: %w", crd.Name, err)
	}
	return nil
}

func waitEstablished(ctx context.Context, api crdAPI, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, crdEstablishTimeout, true, func(ctx context.Context) (bool, error) {
		crd, err := api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s was not established within %s: %w", name, crdEstablishTimeout, err)
	}
	return nil
}
