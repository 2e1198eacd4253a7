"""Exceptions raised by onnxprobe: one class per library error code, carrying the same one-line
message the command line prints after ``onnxprobe: error:``.

``exit_code`` is the command line's exit status for the same error (2 bad input, 3 runtime).
"""


class Error(Exception):
    """Base class of every onnxprobe error."""

    code = "unknown"
    exit_code = 2


class InvalidArgument(Error, ValueError):
    """Bad input: option values, shapes, inputs that do not match the model."""

    code = "invalid-argument"


class NotFound(Error, LookupError):
    """A file, tensor or node that does not exist."""

    code = "not-found"


class IoError(Error, OSError):
    """Reading or writing failed."""

    code = "io-error"


class Corrupt(Error, ValueError):
    """A file that exists but cannot be parsed (model, .npy, .npz, dump)."""

    code = "corrupt"


class Unsupported(Error):
    """A valid request this build cannot honour."""

    code = "unsupported"


class BackendError(Error, RuntimeError):
    """ONNX Runtime failed, or rejected the model or the provider."""

    code = "backend"
    exit_code = 3


class ResourceExhausted(Error, MemoryError):
    """Memory (or another resource) ran out."""

    code = "resource-exhausted"


_BY_CODE = {c.code: c for c in (InvalidArgument, NotFound, IoError, Corrupt, Unsupported, BackendError,
                                ResourceExhausted)}


def error_class(code):
    """The exception class for a library error code (called by the extension module)."""
    return _BY_CODE.get(code, Error)
