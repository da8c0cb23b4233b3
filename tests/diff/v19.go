package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	tfcontroller "github.com/kubeflow/training-operator/pkg/controller.v1/tensorflow"
	commonutil "github.com/kubeflow/training-operator/pkg/util"
	"github.com/kubeflow/training-operator/pkg/webhooks/tensorflow"
	corev1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// FieldErr is one Kubernetes field error, as both implementations report it.
type FieldErr struct {
	Field, Type, Detail string
}

func (e FieldErr) String() string { return fmt.Sprintf("%s %s %q", e.Field, e.Type, e.Detail) }

// v19Decode is v1.9's decoding: sigs.k8s.io/yaml into the typed TFJob.
func v19Decode(data []byte) (*kubeflowv1.TFJob, error) {
	job := &kubeflowv1.TFJob{}
	if err := yaml.Unmarshal(data, job); err != nil {
		return nil, err
	}
	return job, nil
}

// catch runs fn and turns a panic into an error.
func catch(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	fn()
	return nil
}

// v19Validate runs the admission webhook's ValidateCreate and returns its field errors.
func v19Validate(job *kubeflowv1.TFJob) ([]FieldErr, error) {
	var err error
	if perr := catch(func() { _, err = (&tensorflow.Webhook{}).ValidateCreate(context.Background(), job) }); perr != nil {
		return nil, perr
	}
	if err == nil {
		return nil, nil
	}
	agg, ok := err.(utilerrors.Aggregate)
	if !ok {
		return nil, fmt.Errorf("ValidateCreate returned %T: %v", err, err)
	}
	var out []FieldErr
	for _, e := range agg.Errors() {
		fe, ok := e.(*field.Error)
		if !ok {
			return nil, fmt.Errorf("ValidateCreate returned a %T in its aggregate: %v", e, e)
		}
		out = append(out, FieldErr{fe.Field, string(fe.Type), fe.Detail})
	}
	return out, nil
}

// v19Defaults applies SetDefaults_TFJob and returns the job marshalled to JSON (error on panic).
func v19Defaults(job *kubeflowv1.TFJob) ([]byte, error) {
	if err := catch(func() { kubeflowv1.SetDefaults_TFJob(job) }); err != nil {
		return nil, err
	}
	return json.Marshal(job)
}

// v19TFConfig is v1.9's TF_CONFIG of replica (rtype, index) of a defaulted job, through the
// exported TFJobReconciler.SetClusterSpec (genTFConfigJSONStr is unexported). clusterDomain is
// passed the way v1.9 reads it, through CUSTOM_CLUSTER_DOMAIN. "" when not distributed.
func v19TFConfig(job *kubeflowv1.TFJob, rtype string, index int, clusterDomain string) (string, error) {
	if clusterDomain != "" {
		os.Setenv(tfcontroller.EnvCustomClusterDomain, clusterDomain)
		defer os.Unsetenv(tfcontroller.EnvCustomClusterDomain)
	}
	pt := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow"}}}}
	var err error
	if perr := catch(func() {
		err = (&tfcontroller.TFJobReconciler{}).SetClusterSpec(job, pt, rtype, strconv.Itoa(index))
	}); perr != nil {
		return "", perr
	}
	if err != nil {
		return "", err
	}
	for _, e := range pt.Spec.Containers[0].Env {
		if e.Name == "TF_CONFIG" {
			return e.Value, nil
		}
	}
	return "", nil
}

// v19UpdateCondition is v1.9's condition state machine (pkg/util/status.go).
func v19UpdateCondition(status *kubeflowv1.JobStatus, ctype, cstatus, reason, message string) {
	commonutil.UpdateJobConditions(status, kubeflowv1.JobConditionType(ctype), corev1.ConditionStatus(cstatus), reason, message)
}
