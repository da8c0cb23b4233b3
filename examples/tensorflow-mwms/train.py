#!/usr/bin/env python3
"""Keras under tf.distribute.MultiWorkerMirroredStrategy, configured by TF_CONFIG alone.

TensorFlow reads TF_CONFIG (TFConfigClusterResolver), connects the workers over gRPC on the
addresses listed there and all-reduces the gradients of a small linear model trained on
synthetic data (seeded). Each worker logs the cluster spec TensorFlow resolved, its task,
num_replicas_in_sync and the loss of every epoch; "training finished" at the end.
Environment: EPOCHS (default 3), STEPS (steps per epoch, default 5).
"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def main():
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    resolver = strategy.cluster_resolver
    print("cluster spec:", json.dumps(resolver.cluster_spec().as_dict(), sort_keys=True), flush=True)
    print("task: %s %d" % (resolver.task_type, resolver.task_id), flush=True)
    print("num_replicas_in_sync:", strategy.num_replicas_in_sync, flush=True)

    rng = np.random.default_rng(0)
    w_true = rng.normal(size=(8, 1)).astype("float32")
    x = rng.normal(size=(512, 8)).astype("float32")
    y = x @ w_true + 0.01 * rng.normal(size=(512, 1)).astype("float32")
    per_worker_batch = 32
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(per_worker_batch * strategy.num_replicas_in_sync)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    dataset = dataset.with_options(options)

    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input(shape=(8,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.1), loss="mse")

    epochs, steps = int(os.environ.get("EPOCHS", "3")), int(os.environ.get("STEPS", "5"))
    history = model.fit(dataset, epochs=epochs, steps_per_epoch=steps, verbose=0)
    for epoch, loss in enumerate(history.history["loss"], 1):
        print("epoch %d loss %.6f" % (epoch, loss), flush=True)
    print("training finished", flush=True)


if __name__ == "__main__":
    main()
