module github.com/switchyard/switchyard/deploy/rig

go 1.26
