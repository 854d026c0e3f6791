// Command crdquantities rewrites the generated CRDs so that a bad quantity in a map of quantities is
// refused with a message for people: the CEL rule of the map (see the +kubebuilder XValidation markers
// that call isQuantity) names the resource and the value, and the regular expression that
// controller-gen copies from resource.Quantity, whose refusal quotes the expression, is removed. The
// values get a maxLength, which the API server needs to bound the rule's cost.
//
// Usage: go run ./hack/crdquantities DIR
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdquantities DIR")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.yaml"))
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no CRDs in %s", os.Args[1])
	}
	for _, file := range files {
		if err == nil {
			err = rewrite(file)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// rewrite drops the quantity pattern from every map of quantities that a CEL rule checks.
func rewrite(file string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(bytes.TrimPrefix(raw, []byte("---\n")), crd); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for i := range crd.Spec.Versions {
		if s := crd.Spec.Versions[i].Schema; s != nil && s.OpenAPIV3Schema != nil {
			walk(s.OpenAPIV3Schema)
		}
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	// controller-gen writes no status; neither does this.
	out = bytes.Replace(out, []byte("status:\n  acceptedNames:\n    kind: \"\"\n    plural: \"\"\n  conditions: null\n  storedVersions: null\n"), nil, 1)
	return os.WriteFile(file, append([]byte("---\n"), out...), 0o644)
}

// maxQuantityLength bounds a quantity's text: 64 characters hold any quantity a resource needs.
const maxQuantityLength = 64

// walk visits every schema below s.
func walk(s *apiextensionsv1.JSONSchemaProps) {
	if checksQuantities(s) && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		s.AdditionalProperties.Schema.Pattern = ""
		// Bounds the cost the API server estimates for the rule, which reads each value.
		s.AdditionalProperties.Schema.MaxLength = ptr.To[int64](maxQuantityLength)
	}
	for name, p := range s.Properties {
		walk(&p)
		s.Properties[name] = p
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walk(s.AdditionalProperties.Schema)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walk(s.Items.Schema)
	}
}

// checksQuantities says whether a CEL rule of s checks its values as quantities.
func checksQuantities(s *apiextensionsv1.JSONSchemaProps) bool {
	for _, rule := range s.XValidations {
		if strings.Contains(rule.Rule, "isQuantity(") {
			return true
		}
	}
	return false
}
