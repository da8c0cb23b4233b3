#!/usr/bin/env python3
"""Helper of scripts/build-image.sh (python3 standard library only; no container tool).

  oci_image.py copy ROOT PATH...
      Copy host files into ROOT at the same absolute paths. A symbolic link met on the way (a
      directory such as /lib -> usr/lib, or the file itself, as libfoo.so.1 -> libfoo.so.1.2.3) is
      recreated as the same link in ROOT and followed, so the dynamic loader finds each library
      under every name the host uses. Prints nothing; fails naming the path it could not copy.

  oci_image.py debian-packages ROOT PATH|package:NAME...
      For the Debian packages owning PATHs (dpkg -S), and those named: their status paragraph in
      ROOT/var/lib/dpkg/status.d/PACKAGE (what vulnerability scanners read in an image without
      dpkg) and their /usr/share/doc/PACKAGE/copyright. Prints "package version" lines.

  oci_image.py layout ROOT OUT_DIR ARCHIVE --epoch S --ref NAME --arch A
                      [--annotation K=V ...] [--entrypoint P] [--user U] [--port N ...] [--env K=V ...]
      Write an OCI image layout (oci-layout, index.json, blobs/sha256/: one gzip layer of ROOT, its
      config and its manifest) into OUT_DIR, and the same as one tar archive ARCHIVE. Reproducible:
      entries sorted, mtime S everywhere, owner 0:0 with no names, modes normalised (0755 for
      directories and executables, 0644 otherwise, sticky bit kept), gzip -n. Prints
      "manifest sha256:...", "config ...", "layer ... SIZE gzip, SIZE tar" lines.
"""
import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import time


def die(msg):
    print(f"oci_image.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


# ------------------------------------------------------------------------------------- copy

def copy_into(root, path, depth=0):
    """Copy absolute host PATH to ROOT + PATH, recreating the symbolic links on its way."""
    if depth > 40:
        die(f"too many levels of symbolic links copying {path}")
    if not os.path.isabs(path):
        die(f"not an absolute path: {path}")
    parts = [p for p in path.split("/") if p]
    cur = "/"
    for i, name in enumerate(parts):
        host = os.path.join(cur, name)
        dest = root + host
        if os.path.islink(host):
            target = os.readlink(host)
            if not os.path.lexists(dest):
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                os.symlink(target, dest)
            elif not os.path.islink(dest) or os.readlink(dest) != target:
                die(f"{dest} exists and is not the link {host} -> {target}")
            resolved = os.path.normpath(os.path.join(cur, target))
            rest = "/".join(parts[i + 1:])
            copy_into(root, resolved + ("/" + rest if rest else ""), depth + 1)
            return
        if i < len(parts) - 1:
            if not os.path.isdir(host):
                die(f"{host} is not a directory (copying {path})")
            os.makedirs(dest, exist_ok=True)
        else:
            if not os.path.exists(host):
                die(f"no such file: {host}")
            if os.path.isdir(host):
                die(f"{host} is a directory; copy its files one by one")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(host, dest)
            shutil.copymode(host, dest)
        cur = host


def cmd_copy(args):
    if len(args) < 2:
        die("usage: oci_image.py copy ROOT PATH...")
    root = os.path.abspath(args[0])
    for p in args[1:]:
        copy_into(root, p)


# ------------------------------------------------------------------------------------- Debian

def owner_package(path):
    """The Debian package owning PATH (tried as given and with /usr merged or not), or None."""
    candidates = [path, os.path.realpath(path)]
    for c in list(candidates):
        if c.startswith("/usr/"):
            candidates.append(c[4:])
        else:
            candidates.append("/usr" + c)
    for c in candidates:
        r = subprocess.run(["dpkg-query", "-S", c], capture_output=True, text=True)
        if r.returncode == 0 and r.stdout:
            line = r.stdout.splitlines()[0]
            if ": " in line and "diversion" not in line:
                return line.split(": ", 1)[0].split(",")[0].strip()
    return None


def cmd_debian_packages(args):
    if len(args) < 2:
        die("usage: oci_image.py debian-packages ROOT PATH...")
    root = os.path.abspath(args[0])
    if shutil.which("dpkg-query") is None:
        die("dpkg-query not found: the package records need a Debian system")
    pkgs = set()
    for p in args[1:]:
        if p.startswith("package:"):  # a package named as such (a file no package owns)
            pkgs.add(p[len("package:"):])
            continue
        pkg = owner_package(p)
        if pkg is None:
            die(f"no Debian package owns {p} (dpkg-query -S)")
        pkgs.add(pkg)
    status_dir = os.path.join(root, "var/lib/dpkg/status.d")
    os.makedirs(status_dir, exist_ok=True)
    for pkg in sorted(pkgs):
        r = subprocess.run(["dpkg-query", "-s", pkg], capture_output=True, text=True)
        if r.returncode != 0:
            die(f"dpkg-query -s {pkg}: {r.stderr.strip()}")
        # One paragraph as in /var/lib/dpkg/status, without the fields about this host's state.
        keep = []
        skip = False
        for line in r.stdout.splitlines():
            if line[:1] in (" ", "\t"):
                if not skip:
                    keep.append(line)
                continue
            field = line.split(":", 1)[0]
            skip = field in ("Status", "Conffiles", "Config-Version")
            if not skip:
                keep.append(line)
        base = pkg.split(":")[0]
        with open(os.path.join(status_dir, base), "w") as f:
            f.write("\n".join(keep) + "\n")
        copyright_file = f"/usr/share/doc/{base}/copyright"
        if os.path.exists(copyright_file):
            copy_into(root, copyright_file)
        version = next((x.split(": ", 1)[1] for x in keep if x.startswith("Version: ")), "?")
        print(f"{base} {version}")


# ------------------------------------------------------------------------------------- layout

def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def canonical_json(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def tar_tree(root, epoch, normalise_modes):
    """An uncompressed tar (bytes) of the tree under ROOT: sorted, fixed mtime, owner 0:0."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def add(rel):
            full = os.path.join(root, rel)
            st = os.lstat(full)
            info = tarfile.TarInfo(rel)
            info.mtime = epoch
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                info.type = tarfile.SYMTYPE
                info.linkname = os.readlink(full)
                info.mode = 0o777
                tar.addfile(info)
            elif stat.S_ISDIR(st.st_mode):
                info.type = tarfile.DIRTYPE
                info.mode = (0o755 | (mode & stat.S_ISVTX)) if normalise_modes else mode
                if mode & stat.S_ISVTX:
                    info.mode |= 0o777
                tar.addfile(info)
            elif stat.S_ISREG(st.st_mode):
                info.size = st.st_size
                info.mode = (0o755 if mode & 0o111 else 0o644) if normalise_modes else mode
                with open(full, "rb") as f:
                    tar.addfile(info, f)
            else:
                die(f"{full}: only directories, regular files and symbolic links go into the image")

        def walk(rel):
            full = os.path.join(root, rel) if rel else root
            for name in sorted(os.listdir(full)):
                child = f"{rel}/{name}" if rel else name
                add(child)
                if os.path.isdir(os.path.join(root, child)) and not os.path.islink(os.path.join(root, child)):
                    walk(child)
        walk("")
    return buf.getvalue()


def gzip_n(data):
    r = subprocess.run(["gzip", "-n", "-9", "-c"], input=data, capture_output=True)
    if r.returncode != 0:
        die(f"gzip failed: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout


def cmd_layout(args):
    import argparse
    ap = argparse.ArgumentParser(prog="oci_image.py layout")
    ap.add_argument("root")
    ap.add_argument("out_dir")
    ap.add_argument("archive")
    ap.add_argument("--epoch", type=int, required=True)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--arch", required=True)
    ap.add_argument("--annotation", action="append", default=[])
    ap.add_argument("--entrypoint", action="append", default=[])
    ap.add_argument("--user", default="")
    ap.add_argument("--port", action="append", default=[])
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--history", default="")
    a = ap.parse_args(args)
    annotations = {}
    for kv in a.annotation:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            die(f"--annotation {kv!r}: expected KEY=VALUE")
        annotations[k] = v
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(a.epoch))

    layer_tar = tar_tree(os.path.abspath(a.root), a.epoch, True)
    layer_gz = gzip_n(layer_tar)
    config = {
        "created": created,
        "architecture": a.arch,
        "os": "linux",
        "config": {
            "User": a.user,
            "Entrypoint": a.entrypoint,
            "Env": a.env,
            "WorkingDir": "/",
            "ExposedPorts": {f"{p}/tcp": {} for p in a.port},
            "Labels": annotations,
        },
        "rootfs": {"type": "layers", "diff_ids": [sha256(layer_tar)]},
        "history": [{"created": created, "created_by": a.history or "scripts/build-image.sh"}],
    }
    if not a.user:
        del config["config"]["User"]
    config_bytes = canonical_json(config)
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": sha256(config_bytes), "size": len(config_bytes)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": sha256(layer_gz), "size": len(layer_gz)}],
        "annotations": annotations,
    }
    manifest_bytes = canonical_json(manifest)
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": sha256(manifest_bytes), "size": len(manifest_bytes),
            "platform": {"architecture": a.arch, "os": "linux"},
            # ref.name: what skopeo, podman and `oci:`/`oci-archive:` references select;
            # io.containerd.image.name: the name `ctr images import` and `docker load` give it.
            "annotations": {"org.opencontainers.image.ref.name": a.ref, "io.containerd.image.name": a.ref},
        }],
    }

    out = os.path.abspath(a.out_dir)
    if os.path.exists(out):
        shutil.rmtree(out)
    blobs = os.path.join(out, "blobs", "sha256")
    os.makedirs(blobs)
    for data in (layer_gz, config_bytes, manifest_bytes):
        with open(os.path.join(blobs, sha256(data).split(":", 1)[1]), "wb") as f:
            f.write(data)
    with open(os.path.join(out, "oci-layout"), "wb") as f:
        f.write(canonical_json({"imageLayoutVersion": "1.0.0"}))
    with open(os.path.join(out, "index.json"), "wb") as f:
        f.write(canonical_json(index))
    archive = tar_tree(out, a.epoch, True)
    tmp = a.archive + ".tmp"
    with open(tmp, "wb") as f:
        f.write(archive)
    os.replace(tmp, a.archive)
    print(f"manifest {sha256(manifest_bytes)}")
    print(f"config {sha256(config_bytes)}")
    print(f"layer {sha256(layer_gz)} {len(layer_gz)} gzip, {len(layer_tar)} tar")


def main():
    if len(sys.argv) < 2:
        die("usage: oci_image.py copy|debian-packages|layout ...")
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "copy":
        cmd_copy(args)
    elif cmd == "debian-packages":
        cmd_debian_packages(args)
    elif cmd == "layout":
        cmd_layout(args)
    else:
        die(f"unknown command {cmd!r} (copy, debian-packages, layout)")


if __name__ == "__main__":
    main()
