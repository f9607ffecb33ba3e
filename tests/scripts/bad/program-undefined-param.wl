# expect: 4: undefined parameter $LINES (declare it with a 'param' line first)
workload prog-undefined
param N=10
program /bin/echo $N $LINES
