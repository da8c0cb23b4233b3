#!/usr/bin/env python3
"""Generate the TFJob structural schema: the CRD and the library's compiled-in table.

    scripts/gen-schema.py [--openapi FILE] [--check | --check-digest]

Inputs: scripts/schema/crd-tfjob.in.yaml (the TFJob CRD, with the Kubernetes definitions it
embeds named by $ref), scripts/schema/enums.yaml, and the Kubernetes OpenAPI v3 document
api/openapi-spec/v3/api__v1_openapi.json of the k8s.io/kubernetes module pinned by
tests/kube/tools/kube-apiserver/go.mod (found with `go mod download -json` unless --openapi
names it). Outputs, all committed: the CRD, deploy/kustomize/base/crd-tfjob.yaml (also reached
as examples/deploy/crd-tfjob.yaml, a symbolic link), the same text in the Helm chart
(deploy/helm/tfjob-operator/crds/crd-tfjob.yaml), and lib/core/schema_table.c. All carry the same
digest of the inputs; --check compares instead of writing (exit 1 on a difference). --check-digest needs no Go and no network: it checks that both outputs carry the
digest of the committed inputs (the OpenAPI document by the sha256 recorded in them).
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FRAME = os.path.join(ROOT, "scripts/schema/crd-tfjob.in.yaml")
ENUMS = os.path.join(ROOT, "scripts/schema/enums.yaml")
GOMOD_DIR = os.path.join(ROOT, "tests/kube/tools/kube-apiserver")
CRD_OUT = os.path.join(ROOT, "deploy/kustomize/base/crd-tfjob.yaml")
CRD_HELM_OUT = os.path.join(ROOT, "deploy/helm/tfjob-operator/crds/crd-tfjob.yaml")
TABLE_OUT = os.path.join(ROOT, "lib/core/schema_table.c")
OPENAPI_IN_MODULE = "api/openapi-spec/v3/api__v1_openapi.json"

# Definitions with a fixed meaning in a CRD (as controller-gen writes them).
INT_OR_STRING = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
SPECIAL = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": INT_OR_STRING,
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": INT_OR_STRING,
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
}
# Keys of the upstream schemas that a CRD keeps (lists are atomic here: no list types). The
# descriptions of the embedded Kubernetes definitions are left out of the CRD (they are the
# pod's own, `kubectl explain pod.spec`): with them the CRD is over 500 KB, and `kubectl apply`
# (client-side) cannot store it in its 256 KiB last-applied annotation. The shape, types,
# required fields and allowed values stay: the server validates and prunes the pod template
# exactly as before.
KEPT = ("type", "format", "required", "enum", "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields")


def kept_default(parent, pname, p):
    """The default of property pname of definition parent, as the CRD carries it, or None.

    The OpenAPI document gives defaults of two kinds: the declared ones (+default= in the Go
    types: ports[].protocol TCP, the empty name of a LocalObjectReference, rbd's pool, ...) and
    the zero value of every non-pointer struct or required field (a {} or a "" the server never
    applies to a pod). The CRD keeps scalar defaults of optional fields: the first kind, as
    training-operator's CRD has them. A default on a required field would make it optional."""
    d = p.get("default")
    if d is None or isinstance(d, (dict, list)) or pname in parent.get("required", ()):
        return None
    return d


def kube_version():
    with open(os.path.join(GOMOD_DIR, "go.mod")) as f:
        m = re.search(r"^\s*k8s\.io/kubernetes (v\S+)", f.read(), re.M)
    if not m:
        sys.exit("gen-schema: no k8s.io/kubernetes version in tests/kube/tools/kube-apiserver/go.mod")
    return m.group(1)


def find_openapi(version):
    out = subprocess.run(["go", "mod", "download", "-json", "k8s.io/kubernetes@" + version], cwd=GOMOD_DIR,
                         check=True, capture_output=True, text=True).stdout
    return os.path.join(json.loads(out)["Dir"], OPENAPI_IN_MODULE)


class Expander:
    """Turns $ref'd OpenAPI v3 definitions into inline structural schemas."""

    def __init__(self, defs, enums, for_crd):
        self.defs = defs
        self.enums = enums
        self.for_crd = for_crd  # the CRD's form: with defaults; the table's: with descriptions
        self.used = set()

    def ref_name(self, ref):
        return ref.rsplit("/", 1)[-1]

    def definition(self, name, stack=()):
        if name in stack:
            sys.exit("gen-schema: %s refers to itself; a structural schema cannot" % name)
        self.used.add(name)
        if name in SPECIAL:
            return dict(SPECIAL[name])
        d = self.defs.get(name)
        if d is None:
            sys.exit("gen-schema: no definition %s in the OpenAPI document" % name)
        return self.node(d, stack + (name,), name)

    def node(self, s, stack, owner=None):
        if "$ref" in s or "allOf" in s:
            ref = s["$ref"] if "$ref" in s else s["allOf"][0]["$ref"]
            out = self.definition(self.ref_name(ref), stack)
            if "description" in s and not self.for_crd:
                out["description"] = s["description"]
            return out
        out = {k: s[k] for k in KEPT if k in s}
        if "description" in s and not self.for_crd:
            out["description"] = s["description"]
        if "properties" in s:
            out["properties"] = {}
            for pname in sorted(s["properties"]):
                p = self.node(s["properties"][pname], stack)
                values = self.enums.get(owner, {}).get(pname)
                if values:
                    check_enum(owner, pname, values, s["properties"][pname].get("description", ""))
                    p["enum"] = list(values)
                default = kept_default(s, pname, s["properties"][pname]) if self.for_crd else None
                if default is not None:
                    if "enum" in p and default not in p["enum"]:
                        sys.exit("gen-schema: %s.%s: default %r is not an allowed value" % (owner, pname, default))
                    p["default"] = default
                out["properties"][pname] = p
        if "additionalProperties" in s and isinstance(s["additionalProperties"], dict):
            out["additionalProperties"] = self.node(s["additionalProperties"], stack)
        if "items" in s:
            out["items"] = self.node(s["items"], stack)
        if "required" in out:
            out["required"] = sorted(out["required"])
        return out


def check_enum(owner, field, values, description):
    for v in values:
        if not re.search(r"\b%s\b" % re.escape(v), description):
            sys.exit("gen-schema: %s.%s: the upstream description does not mention %r" % (owner, field, v))


def expand_frame(node, exp, for_table):
    """The frame with every $ref expanded; x-tfjob-table-ref nodes as the CRD or the table wants them."""
    if isinstance(node, list):
        return [expand_frame(v, exp, for_table) for v in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        out = exp.definition(node["$ref"])
        if "description" in node:
            out["description"] = node["description"]
        return out
    if "x-tfjob-table-ref" in node:
        if for_table:
            return exp.definition(node["x-tfjob-table-ref"])
        node = {k: v for k, v in node.items() if k != "x-tfjob-table-ref"}
    return {k: expand_frame(v, exp, for_table) for k, v in node.items()}


# ---- the CRD as YAML (a small emitter: stable output whatever the PyYAML version) ----

PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./-]*$")
YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}


def scalar(v):
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str) and PLAIN.match(v) and v.lower() not in YAML_WORDS:
        return v
    return json.dumps(v)


def flow(x):
    """A leaf schema or a list of scalars on one line ({type: string}, [a, b]), or None."""
    if isinstance(x, dict) and x and all(not isinstance(v, (dict, list)) for v in x.values()):
        text = "{%s}" % ", ".join("%s: %s" % (scalar(k), scalar(v)) for k, v in x.items())
    elif isinstance(x, list) and x and all(not isinstance(v, (dict, list)) for v in x):
        text = "[%s]" % ", ".join(scalar(v) for v in x)
    else:
        return None
    return text if len(text) <= 80 and "\n" not in text else None


def emit(v, indent, out):
    pad = "  " * indent
    if isinstance(v, dict):
        for k, x in v.items():
            if flow(x) is not None:
                out.append("%s%s: %s" % (pad, scalar(k), flow(x)))
            elif isinstance(x, (dict, list)) and x:
                out.append("%s%s:" % (pad, scalar(k)))
                emit(x, indent + 1, out)
            else:
                out.append("%s%s: %s" % (pad, scalar(k), "{}" if x == {} else "[]" if x == [] else scalar(x)))
    else:
        for x in v:
            if isinstance(x, dict) and x:
                lines = []
                emit(x, indent + 1, lines)
                out.append("%s- %s" % (pad, lines[0].lstrip()))
                out.extend(lines[1:])
            else:
                out.append("%s- %s" % (pad, scalar(x)))


# ---- the C table ----

TYPES = {"string": "STRING", "boolean": "BOOL", "object": "OBJECT", "array": "ARRAY", "number": "NUMBER"}


def node_type(s):
    if s.get("x-kubernetes-int-or-string"):
        return "INT_OR_STRING"
    t = s.get("type")
    if t == "integer":
        return "INT32" if s.get("format") == "int32" else "INT64"
    if t is None:
        return "ANY"
    return TYPES[t]


class Table:
    def __init__(self):
        self.nodes = [None]  # node 0: anything
        self.keys = {("ANY", False, (), 0, ()): 0}
        self.props = []
        self.enums = []

    def add(self, s):
        props = [(name, self.add(p), name in s.get("required", ())) for name, p in sorted(s.get("properties", {}).items())]
        sub = s.get("items", s.get("additionalProperties"))
        values = self.add(sub) if sub is not None else 0
        preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
        key = (node_type(s), preserve, tuple(props), values, tuple(s.get("enum", ())))
        if key not in self.keys:
            self.keys[key] = len(self.nodes)
            self.nodes.append(key)
        return self.keys[key]

    def c_text(self, root, header):
        lines = [header, '#include "core/schema_table.h"', ""]
        node_rows, prop_rows, enum_rows = [], [], []
        max_props = 0
        for i, key in enumerate(self.nodes):
            if key is None:
                node_rows.append("\t{ TFJOB__SCHEMA_ANY, false, 0, 0, 0, 0, 0, 0 }, /* 0: anything */")
                continue
            typ, preserve, props, values, enum = key
            required = sum(1 for p in props if p[2])
            max_props = max(max_props, len(props))
            node_rows.append("\t{ TFJOB__SCHEMA_%s, %s, %d, %d, %d, %d, %d, %d }, /* %d */" % (
                typ, "true" if preserve else "false", required, len(prop_rows), len(props), values,
                len(enum_rows), len(enum), i))
            for name, node, req in props:
                prop_rows.append('\t{ "%s", %d, %s },' % (name, node, "true" if req else "false"))
            for v in enum:
                enum_rows.append("\t%s," % json.dumps(v))
            if enum:
                enum_rows.append("\tNULL,")
        lines.append("/* Each node's allowed values, NULL-terminated. */")
        lines.append("const char *const tfjob__schema_enum_values[] = {")
        lines += enum_rows or ["\tNULL,"]
        lines += ["};", "", "const struct tfjob__schema_prop tfjob__schema_props[] = {"]
        lines += prop_rows
        lines += ["};", "", "const struct tfjob__schema_node tfjob__schema_nodes[] = {"]
        lines += node_rows
        lines += ["};", "", "const unsigned tfjob__schema_root = %d;" % root,
                  "const unsigned tfjob__schema_node_count = %d;" % len(self.nodes),
                  "const unsigned tfjob__schema_max_props = %d;" % max_props, ""]
        return "\n".join(lines)


def input_digest(openapi_sha, frame_bytes, enums_bytes):
    """The digest both outputs carry: of the OpenAPI document (its sha256), the frame, the enums and this script."""
    with open(os.path.abspath(__file__), "rb") as f:
        self_bytes = f.read()
    digest = hashlib.sha256(bytes.fromhex(openapi_sha))
    for part in (frame_bytes, enums_bytes, self_bytes):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def check_digest():
    """Both committed outputs name the same OpenAPI sha256 and carry the digest of the committed inputs."""
    found = []
    for path in (CRD_OUT, CRD_HELM_OUT, TABLE_OUT):
        text = read_bytes(path).decode()
        sha = re.search(r"api__v1_openapi\.json \(sha256 ([0-9a-f]{64})\)", text)
        digest = re.search(r"schema-digest: ([0-9a-f]{64})", text)
        if not sha or not digest:
            print("gen-schema: %s has no generator header" % os.path.relpath(path, ROOT))
            return 1
        found.append((sha.group(1), digest.group(1)))
    if len(set(found)) != 1:
        print("gen-schema: the CRDs and the table come from different generator runs")
        return 1
    want = input_digest(found[0][0], read_bytes(FRAME), read_bytes(ENUMS))
    if found[0][1] != want:
        print("gen-schema: the committed outputs are not generated from the committed inputs (run scripts/gen-schema.py)")
        return 1
    print("gen-schema: %s, %s and %s carry the inputs' digest" % tuple(
        os.path.relpath(p, ROOT) for p in (CRD_OUT, CRD_HELM_OUT, TABLE_OUT)))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--openapi", help="api__v1_openapi.json (default: from the Go module cache)")
    ap.add_argument("--check", action="store_true", help="compare with the committed files, write nothing")
    ap.add_argument("--check-digest", action="store_true", help="only check the digests of the committed files")
    args = ap.parse_args()
    if args.check_digest:
        return check_digest()

    version = kube_version()
    openapi_path = args.openapi or find_openapi(version)
    openapi_bytes, frame_bytes, enums_bytes = read_bytes(openapi_path), read_bytes(FRAME), read_bytes(ENUMS)
    digest = input_digest(hashlib.sha256(openapi_bytes).hexdigest(), frame_bytes, enums_bytes)

    defs = json.loads(openapi_bytes)["components"]["schemas"]
    frame = yaml.safe_load(frame_bytes)
    enums = yaml.safe_load(enums_bytes)
    crd = expand_frame(frame, Expander(defs, enums, for_crd=True), for_table=False)
    versions = frame["spec"]["versions"]
    if len(versions) != 1:
        sys.exit("gen-schema: the frame must have exactly one version")
    table_schema = expand_frame(versions[0]["schema"]["openAPIV3Schema"], Expander(defs, enums, for_crd=False),
                                for_table=True)

    origin = "k8s.io/kubernetes %s %s (sha256 %s)" % (version, OPENAPI_IN_MODULE,
                                                      hashlib.sha256(openapi_bytes).hexdigest())
    crd_lines = [
        "# The TFJob custom resource definition (kubeflow.org/v1), written for libtfjob.",
        "# GENERATED by scripts/gen-schema.py from scripts/schema/crd-tfjob.in.yaml and",
        "# " + origin + ";",
        "# do not edit. lib/core/schema_table.c, the library's copy of this schema, comes from the",
        "# same run: tfjobctl validate and the API server agree on every field.",
        "#",
        "# The schema gives the server the shape, types, required fields and, for a few pod fields,",
        "# allowed values of a TFJob; unknown fields are refused (kubectl's fieldValidation=Strict) or",
        "# pruned. The rules of what a valid TFJob is (replica type names, restart policies, container",
        "# named \"tensorflow\", ...) live in the library (tfjobctl validate, the operator).",
        "#",
        "# The descriptions of the embedded pod template are left out (kubectl explain pod.spec has",
        "# them): the file stays small enough for a client-side `kubectl apply -f`.",
        "#",
        "#   tests/kube/harness.sh start DIR    installs this file and waits until it is Established.",
        "# schema-digest: " + digest,
    ]
    emit(crd, 0, crd_lines)
    crd_text = "\n".join(crd_lines) + "\n"

    table = Table()
    root = table.add(table_schema)
    header = "\n".join([
        "/*",
        " * GENERATED by scripts/gen-schema.py; do not edit. The TFJob structural schema (the same run",
        " * wrote deploy/kustomize/base/crd-tfjob.yaml) from scripts/schema/crd-tfjob.in.yaml and",
        " * " + origin + ".",
        " * schema-digest: " + digest,
        " * SPDX-License-Identifier: Apache-2.0",
        " */",
    ])
    table_text = table.c_text(root, header)

    status = 0
    for path, text in ((CRD_OUT, crd_text), (CRD_HELM_OUT, crd_text), (TABLE_OUT, table_text)):
        rel = os.path.relpath(path, ROOT)
        if args.check:
            try:
                with open(path) as f:
                    same = f.read() == text
            except FileNotFoundError:
                same = False
            if not same:
                print("gen-schema: %s is not what the generator writes (run scripts/gen-schema.py)" % rel)
                status = 1
        else:
            with open(path, "w") as f:
                f.write(text)
            print("gen-schema: wrote %s" % rel)
    return status


if __name__ == "__main__":
    sys.exit(main())
