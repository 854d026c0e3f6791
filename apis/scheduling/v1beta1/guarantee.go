package v1beta1

import (
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A guarantee is written in either of two forms: flat, a quantity per resource as capability is
// written (guarantee: {cpu: 8}), or nested under resource as Volcano's Queue writes it (guarantee:
// {resource: {cpu: 8}}). Both decode to Guarantee.Resource. A Queue is encoded back in the form it
// was decoded from, so that an update by the controller, or kubectl apply's three-way merge against
// what its owner wrote, never rewrites the owner's form.

// guaranteeNested is the key of the nested form.
const guaranteeNested = "resource"

// GuaranteeForm is how a guarantee was written. It is no field of the API: UnmarshalJSON sets it,
// MarshalJSON reads it.
type GuaranteeForm struct {
	// Flat: written as a quantity per resource.
	Flat bool
	// Rejected is, as a JSON object, every entry that was not taken: in the flat form an entry that
	// is not a quantity of at least 0, in the nested form any key beside resource. The admission
	// webhook refuses them (RejectedEntries); a Queue that came past it keeps them as written, and
	// nothing is guaranteed for them.
	Rejected string
}

// UnmarshalJSON decodes either form.
func (g *Guarantee) UnmarshalJSON(data []byte) error {
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(data, &entries); err != nil {
		return err
	}
	*g = Guarantee{}
	rejected := map[string]json.RawMessage{}
	if nested, ok := entries[guaranteeNested]; ok {
		if err := json.Unmarshal(nested, &g.Resource); err != nil {
			return err
		}
		delete(entries, guaranteeNested)
		rejected = entries
	} else {
		g.Form.Flat = len(entries) > 0
		for name, raw := range entries {
			var q resource.Quantity
			if json.Unmarshal(raw, &q) != nil || q.Sign() < 0 {
				rejected[name] = raw
				continue
			}
			if g.Resource == nil {
				g.Resource = corev1.ResourceList{}
			}
			g.Resource[corev1.ResourceName(name)] = q
		}
	}
	if len(rejected) > 0 {
		text, err := json.Marshal(rejected)
		if err != nil {
			return err
		}
		g.Form.Rejected = string(text)
	}
	return nil
}

// MarshalJSON encodes the guarantee in the form it was decoded from (nested when built in code),
// with its rejected entries as they were written.
func (g Guarantee) MarshalJSON() ([]byte, error) {
	out := g.rejectedEntries()
	if out == nil {
		out = map[string]json.RawMessage{}
	}
	if !g.Form.Flat {
		if len(g.Resource) > 0 {
			nested, err := json.Marshal(g.Resource)
			if err != nil {
				return nil, err
			}
			out[guaranteeNested] = nested
		}
		return json.Marshal(out)
	}
	for name, q := range g.Resource {
		text, err := json.Marshal(q)
		if err != nil {
			return nil, err
		}
		out[string(name)] = text
	}
	return json.Marshal(out)
}

func (g Guarantee) rejectedEntries() map[string]json.RawMessage {
	if g.Form.Rejected == "" {
		return nil
	}
	var entries map[string]json.RawMessage
	if json.Unmarshal([]byte(g.Form.Rejected), &entries) != nil {
		return nil
	}
	return entries
}

// Path is the field path of the guarantee of one resource, in the form it was written: base is the
// guarantee's own path (spec.guarantee).
func (g Guarantee) Path(base *field.Path, name corev1.ResourceName) *field.Path {
	if g.Form.Flat {
		return base.Key(string(name))
	}
	return base.Child(guaranteeNested).Key(string(name))
}

// RejectedEntries names the entries that were not taken, with the rule each breaks.
func (g Guarantee) RejectedEntries(base *field.Path) field.ErrorList {
	entries := g.rejectedEntries()
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	slices.Sort(names)
	var errs field.ErrorList
	for _, name := range names {
		value := string(entries[name])
		var text string
		if json.Unmarshal(entries[name], &text) == nil {
			value = text // a string is shown as it was written, without JSON's quotes
		}
		if g.Form.Flat {
			errs = append(errs, field.Invalid(base.Key(name), value,
				"must be a quantity of at least 0 (examples: 8, 500m, 16Gi)"))
			continue
		}
		errs = append(errs, field.Invalid(base.Key(name), value,
			"write the guarantee in one form: flat ({cpu: 8}) or nested under resource ({resource: {cpu: 8}}), not both"))
	}
	return errs
}
