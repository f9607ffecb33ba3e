# ghostscript renders a PDF the project generates: N pages of filled and
# stroked triangles and text, made as PostScript and turned into PDF by gs
# itself in setup (untimed, nothing preloaded), then rasterised at 72 dpi.
workload  prog-ghostscript
describe  "gs renders a generated N-page PDF to raw pixels at 72 dpi"
param     N=100 quick=10 min=1 max=100000 help="pages"

setup     /usr/bin/python3 {dir}/programs/make_input.py ps $N {tmp}/doc.ps
setup     /usr/bin/env gs -q -dBATCH -dNOPAUSE -dSAFER -sDEVICE=pdfwrite -o {tmp}/doc.pdf {tmp}/doc.ps
program   /usr/bin/python3 {dir}/programs/serve.py --package ghostscript -- gs -q -dBATCH -dNOPAUSE -dSAFER -sDEVICE=ppmraw -r72 -o /dev/null {tmp}/doc.pdf
