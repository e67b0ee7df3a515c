"""opgrad's code generator: derivatives.yaml -> generated/ (run ``python -m codegen``)."""
