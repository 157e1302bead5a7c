module {{name}}-adapter

go 1.19
