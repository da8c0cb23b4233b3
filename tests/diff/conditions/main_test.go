package conditions

import (
	"io"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"github.com/sirupsen/logrus"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// TestMain silences v1.9's loggers (logrus warnings, controller-runtime's unset-logger notice).
func TestMain(m *testing.M) {
	logrus.SetOutput(io.Discard)
	ctrllog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
