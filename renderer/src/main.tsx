document.getElementById('root')!.textContent = 'Warden';
