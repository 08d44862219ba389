"""The wire protocol: types, JSON-RPC codec, errors, versions. No I/O."""
