//! The element-wise mean of several saved models of one shape: stochastic weight averaging
//! (Izmailov et al., "Averaging Weights Leads to Wider Optima and Better Generalization",
//! UAI 2018), as KataGo exports the mean of recent snapshots for self-play (Wu, "Accelerating
//! Self-Play Learning in Go", 2019, §5). The batch-norm running statistics are averaged
//! like the weights (not re-estimated on data): the snapshots averaged are a few
//! generations of one run, whose statistics differ little.

use std::path::{Path, PathBuf};

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::tensor::{Tensor, TensorData};

use crate::net::Net;
use crate::store::{load_model, read_manifest, save, ModelIoError};
use crate::tensor_util::to_vec;

struct Collect(Vec<Vec<f32>>);

impl ModuleVisitor for Collect {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        self.0.push(to_vec(param.val()));
    }
}

struct Replace {
    values: std::vec::IntoIter<Vec<f32>>,
}

impl ModuleMapper for Replace {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let values = self.values.next().expect("one value per parameter, counted on the same network");
        param.map(|t| {
            let (shape, device) = (t.shape(), t.device());
            Tensor::from_data(TensorData::new(values, shape), &device)
        })
    }
}

/// The mean of `nets` (one config): every parameter and running statistic averaged.
fn average_nets(nets: &[Net]) -> Option<Net> {
    let (first, rest) = nets.split_first()?;
    let mut sum = Collect(Vec::new());
    first.visit(&mut sum);
    for net in rest {
        let mut c = Collect(Vec::new());
        net.visit(&mut c);
        for (s, v) in sum.0.iter_mut().zip(c.0) {
            s.iter_mut().zip(v).for_each(|(a, b)| *a += b);
        }
    }
    let n = nets.len() as f32;
    sum.0.iter_mut().for_each(|s| s.iter_mut().for_each(|a| *a /= n));
    Some(first.clone().map(&mut Replace { values: sum.0.into_iter() }))
}

/// Saves into `out` the mean of the models in `dirs`, which must share one network config
/// and one game tag (the first's tag is written).
pub fn average_models(dirs: &[PathBuf], out: &Path) -> Result<(), ModelIoError> {
    let Some(first) = dirs.first() else {
        return Err(ModelIoError::Manifest { path: out.to_path_buf(), message: "no model to average".into() });
    };
    let manifest = read_manifest(first)?;
    for dir in &dirs[1..] {
        let m = read_manifest(dir)?;
        let problem = if m.config != manifest.config {
            Some(format!("its network {:?} differs from {}'s {:?}", m.config, first.display(), manifest.config))
        } else if m.game != manifest.game {
            Some(format!("its game {:?} differs from {}'s {:?}", m.game, first.display(), manifest.game))
        } else {
            None
        };
        if let Some(message) = problem {
            return Err(ModelIoError::Manifest { path: dir.join("model.json"), message });
        }
    }
    let device = crate::device::cpu_device();
    let nets = dirs.iter().map(|d| load_model(d, &device)).collect::<Result<Vec<_>, _>>()?;
    let mean = average_nets(&nets).expect("at least one model");
    save(&mean, out, manifest.game)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NetConfig;

    fn params(net: &Net) -> Vec<Vec<f32>> {
        let mut c = Collect(Vec::new());
        net.visit(&mut c);
        c.0
    }

    #[test]
    fn the_mean_of_saved_models_is_each_weights_mean_and_refuses_another_shape() {
        let device = crate::device::cpu_device();
        let config = NetConfig::new(6, 5, 5, 4).with_tower(1, 8);
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("m{i}"))).collect();
        let nets: Vec<Net> = paths
            .iter()
            .map(|p| {
                let net = Net::new(&config, &device).unwrap();
                crate::store::save_model(&net, p).unwrap();
                crate::store::load_model(p, &device).unwrap()
            })
            .collect();
        let out = dir.path().join("mean");
        average_models(&paths, &out).unwrap();
        let mean = params(&crate::store::load_model(&out, &device).unwrap());
        let each: Vec<Vec<Vec<f32>>> = nets.iter().map(params).collect();
        assert_eq!(mean.len(), each[0].len());
        let mut differ = 0;
        for (k, m) in mean.iter().enumerate() {
            for (i, &x) in m.iter().enumerate() {
                let (a, b, c) = (each[0][k][i], each[1][k][i], each[2][k][i]);
                assert!((x - (a + b + c) / 3.0).abs() <= 1e-6 * (1.0 + a.abs() + b.abs() + c.abs()), "parameter {k}[{i}]: {x} vs {a} {b} {c}");
                differ += (a != b) as usize;
            }
        }
        assert!(differ > 0, "the networks were initialised alike: the test would not see a wrong mean");
        let other = dir.path().join("other");
        crate::store::save_model(&Net::new(&config.clone().with_tower(1, 16), &device).unwrap(), &other).unwrap();
        let e = average_models(&[paths[0].clone(), other], &dir.path().join("bad")).unwrap_err().to_string();
        assert!(e.contains("other") && e.contains("differs"), "{e}");
    }
}
