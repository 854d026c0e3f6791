package controller

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// preconditionUID deletes only the object that was read, never a successor with the same name.
func preconditionUID(uid types.UID) metav1.DeleteOptions {
	return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// ignoreGoneOrStale drops the errors of a status write that a later informer event will redo: the
// object is gone, or the cache was behind (a conflict). Retrying with backoff would only delay the
// write that the event triggers anyway.
func ignoreGoneOrStale(err error) error {
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
