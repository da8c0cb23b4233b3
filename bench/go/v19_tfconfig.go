package main

import (
	"fmt"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	tfcontroller "github.com/kubeflow/training-operator/pkg/controller.v1/tensorflow"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// v19TFConfig times v1.9's TF_CONFIG generation for replica (rtype, index): its
// genTFConfigJSONStr is unexported, so this calls the exported TFJobReconciler.SetClusterSpec,
// which needs nothing of the reconciler but the job (nil clients are fine). Each call appends
// the env var to a fresh copy of a one-container pod template (the env slice is reset).
func v19TFConfig(data []byte, rtype string, index int) func() error {
	job := &kubeflowv1.TFJob{}
	if err := yaml.Unmarshal(data, job); err != nil {
		return func() error { return err }
	}
	kubeflowv1.SetDefaults_TFJob(job)
	r := &tfcontroller.TFJobReconciler{}
	pt := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow"}}}}
	idx := fmt.Sprint(index)
	return func() error {
		pt.Spec.Containers[0].Env = pt.Spec.Containers[0].Env[:0]
		if err := r.SetClusterSpec(job, pt, rtype, idx); err != nil {
			return err
		}
		if len(pt.Spec.Containers[0].Env) != 1 {
			return fmt.Errorf("SetClusterSpec set no TF_CONFIG")
		}
		return nil
	}
}

// v19TFConfigString returns v1.9's TF_CONFIG of the replica (for checking both agree).
func v19TFConfigString(data []byte, rtype string, index int) (string, error) {
	job := &kubeflowv1.TFJob{}
	if err := yaml.Unmarshal(data, job); err != nil {
		return "", err
	}
	kubeflowv1.SetDefaults_TFJob(job)
	pt := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow"}}}}
	if err := (&tfcontroller.TFJobReconciler{}).SetClusterSpec(job, pt, rtype, fmt.Sprint(index)); err != nil {
		return "", err
	}
	if len(pt.Spec.Containers[0].Env) == 0 {
		return "", nil
	}
	return pt.Spec.Containers[0].Env[0].Value, nil
}
