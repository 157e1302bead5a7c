module example.com/gogemini

go 1.19
