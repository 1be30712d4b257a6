"""Regenerate proto/*_pb2.py from proto/*.proto.

    python scripts/gen_protos.py [--out DIR] [--protoc PATH]

The .proto files import each other as "tfevents/proto/<name>.proto" so that the
generated modules import each other as `tfevents.proto.<name>_pb2`. protoc needs
an include root where that path exists, so this script lays one out in a
temporary directory (a symlink tfevents/proto -> proto/).

The committed modules are made with protoc 3.21 (Debian bookworm's
protobuf-compiler): its gencode runs on every protobuf runtime from 4.21 on,
while newer protoc versions emit a runtime version check that rejects older
runtimes. tests/proto/test_protos.py fails when the committed modules are stale.
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROTO_DIR = os.path.join(REPO, "proto")


def protoc_command(explicit: str | None) -> list[str]:
    """protoc from --protoc, from PATH, or grpc_tools' bundled one."""
    if explicit:
        return [explicit]
    found = shutil.which("protoc")
    if found:
        return [found]
    return [sys.executable, "-m", "grpc_tools.protoc"]


def _run_protoc(protoc: str | None, output_args: list[str]) -> None:
    """Run protoc on every proto/*.proto from an include root holding tfevents/proto/."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "tfevents"))
        os.symlink(PROTO_DIR, os.path.join(root, "tfevents", "proto"))
        sources = sorted(glob.glob(os.path.join(PROTO_DIR, "*.proto")))
        rel = [os.path.join("tfevents", "proto", os.path.basename(s)) for s in sources]
        cmd = protoc_command(protoc) + ["-I", root] + output_args + rel
        if cmd[0] == sys.executable:  # grpc_tools needs the well-known types' path
            import grpc_tools
            cmd[3:3] = ["-I", os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")]
        subprocess.run(cmd, check=True, cwd=root)


def descriptor_set(protoc: str | None = None) -> bytes:
    """The serialized FileDescriptorSet of proto/*.proto, as protoc compiles them now."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "set.pb")
        _run_protoc(protoc, ["--descriptor_set_out=" + out])
        with open(out, "rb") as f:
            return f.read()


def generate(out_dir: str, protoc: str | None = None) -> list[str]:
    """Compile every proto/*.proto into out_dir; return the written paths."""
    with tempfile.TemporaryDirectory() as gen:
        _run_protoc(protoc, ["--python_out=" + gen])
        written = []
        for path in sorted(glob.glob(os.path.join(gen, "tfevents", "proto", "*_pb2.py"))):
            dest = os.path.join(out_dir, os.path.basename(path))
            shutil.copyfile(path, dest)
            written.append(dest)
        return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=PROTO_DIR, help="where to write the modules (default: proto/)")
    parser.add_argument("--protoc", default=None, help="protoc binary (default: PATH, then grpc_tools)")
    args = parser.parse_args()
    for path in generate(args.out, args.protoc):
        print(os.path.relpath(path, REPO))


if __name__ == "__main__":
    main()
