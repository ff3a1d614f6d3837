"""The handler-facing API, as DJL Serving's djl_python has it.

inputs (Input, the request), outputs (Output, the reply), pairlist
(PairList, ordered content), ndlist (numpy arrays as DJL's NDList and as
npz) and errors (how a handler's failure is reported). The djl_python shim
re-exports these classes, so handlers, the runtime and the shim share one
Input and one Output. This part imports nothing of the runtime outside
itself.
"""
